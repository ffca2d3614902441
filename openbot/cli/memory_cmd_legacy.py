"""`openbot memory <bot> import-legacy`: the Rust openbot's global memory into this project's memory.

What is imported and what is not: openbot.state.legacy_memory. Kept apart from memory_cmd so the everyday
commands stay small; it registers on the same `memory` group.
"""

from __future__ import annotations

import typer

from openbot.cli.memory_cmd import PROJECT_HELP, _store, memory_app


def _keys(keys: list[str]) -> str:
    shown = ", ".join(repr(k) for k in keys[:10])
    return shown + (f" and {len(keys) - 10} more" if len(keys) > 10 else "")


@memory_app.command("import-legacy")
def import_legacy(
    ctx: typer.Context,
    project: str | None = typer.Option(None, "--project", help=PROJECT_HELP),
    overwrite: bool = typer.Option(
        False,
        "--overwrite",
        help="Where this project already has a key with another value, take the legacy one.",
    ),
) -> None:
    """Import the Rust openbot's global memory (bots/<bot>/memory.json) into this project's memory."""
    from openbot.errors import NotFoundError
    from openbot.state.legacy_memory import global_file, import_global
    from openbot.views.escapes import visible

    bot, slug, store = _store(ctx, project)
    source = global_file(bot)
    try:
        report = import_global(bot, store, overwrite)
    except FileNotFoundError:
        raise NotFoundError(
            f"no legacy memory for {bot}: {source} does not exist",
            hint="only the Rust openbot wrote it (`openbot memory <bot> set` without --project)",
        ) from None
    lines = [f"imported {len(report.added)} new note(s) from {source} into {bot}'s memory in {slug}"]
    if report.replaced:
        lines.append(f"  replaced (--overwrite): {_keys(report.replaced)}")
    if report.same:
        lines.append(f"  already there with the same value: {len(report.same)}")
    if report.kept:
        lines.append(
            f"  kept this project's own value of {_keys(report.kept)} (--overwrite takes the legacy value)"
        )
    for key, why in report.refused.items():
        lines.append(f"  not imported {key!r}: {why}")
    if report.other_keys:
        lines.append(
            f"  not imported: the file's {_keys(report.other_keys)} (openbot memory holds entries only)"
        )
    lines.append(f"{source} is kept as it was; delete it once you no longer need it")
    for line in lines:
        typer.echo(visible(line))
