"""`openbot memory <bot> show | set | remove | clear`: the memory a bot keeps per project.

The project defaults to the repository around the current directory, so this is the memory that
`openbot run` reads there. `--project` may come before the bot, between the bot and the subcommand, or
after the subcommand. Imports stay light: this command must start as fast as a bare typer app.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperGroup

from openbot.cli.typer_app import app
from openbot.errors import ConfigError, NotFoundError

if TYPE_CHECKING:
    from openbot.state.memory import MemoryStore
    from openbot.state.project import Project

PROJECT_HELP = "Project slug (a directory under workspaces/); default: the current directory's repository."


def project_first(args: list[str]) -> list[str]:
    """`BOT --project P CMD …` → `--project P BOT CMD …`.

    A group stops reading its own options at its first argument (the bot), so `--project` right after the
    bot would be taken for the subcommand's name."""
    i = 0
    while i < len(args) and args[i].startswith("-"):  # group options before the bot
        i += 2 if args[i] == "--project" else 1
    moved: list[str] = []
    j = i + 1
    while j < len(args):
        if args[j] == "--project" and j + 1 < len(args):
            moved += args[j : j + 2]
            j += 2
        elif args[j].startswith("--project="):
            moved.append(args[j])
            j += 1
        else:
            break
    return [*moved, *args[: i + 1], *args[j:]] if moved else args


class _MemoryGroup(TyperGroup):
    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        return super().parse_args(ctx, project_first(args))


memory_app = typer.Typer(
    name="memory",
    cls=_MemoryGroup,
    help="Show and edit a bot's memory for one project.",
    no_args_is_help=True,
)
app.add_typer(memory_app)


@dataclass
class _Target:
    bot: str
    project: str | None  # --project given before the subcommand


def _store(ctx: typer.Context, project: str | None) -> tuple[str, str, MemoryStore]:
    """(bot, project slug, store) for a subcommand; its own --project wins over the group's.

    The bot is checked here, not in the group callback, so `memory <any> show --help` always shows help."""
    # Imported here, not at the top, so `openbot --help` pays only for typer.
    from openbot import paths
    from openbot.config.bots import find_bot
    from openbot.git.repo import find_repo
    from openbot.state.memory import MemoryStore
    from openbot.state.project import resolve_project

    target: _Target = ctx.obj
    repo = find_repo(Path.cwd())
    find_bot(target.bot, repo.workdir if repo else None)
    proj = resolve_project(Path.cwd(), project if project is not None else target.project)
    slug = project_slug(target.bot, proj)
    return target.bot, slug, MemoryStore(paths.memory_file(target.bot, slug))


def project_slug(bot: str, proj: Project) -> str:
    """The workspace `memory` and `history` use: the repository's (or the Rust openbot's directory until a
    run adopts it). Outside a repository only one a run there made (--skip-git-check), said in one line:
    a directory name must never quietly stand in for a project."""
    from openbot import paths
    from openbot.errors import UsageError

    slug = legacy_slug(bot, proj)
    if proj.repo is None and proj.identity != "--project":
        if not (paths.bot_home(bot) / "workspaces" / slug).is_dir():
            raise UsageError(
                f"{Path.cwd()} is not in a git repository, and no run of {bot} used this directory",
                hint="cd into the repository, or pass --project SLUG "
                f"(the bot's projects: ls {paths.bot_home(bot) / 'workspaces'})",
            )
        typer.echo(f"openbot: not in a git repository: using this directory's project {slug}", err=True)
    return slug


def legacy_slug(bot: str, proj: Project) -> str:
    """The workspace to use for `proj`, and a one-line note on stderr when it is the Rust openbot's."""
    from openbot.state.legacy_workspace import view_slug
    from openbot.views.escapes import visible

    slug, note = view_slug(bot, proj)
    if note:
        typer.echo(visible(note), err=True)
    return slug


@memory_app.callback()
def _memory(
    ctx: typer.Context,
    bot: str = typer.Argument(..., metavar="BOT", help="The bot whose memory to use."),
    project: str | None = typer.Option(None, "--project", help=PROJECT_HELP),
) -> None:
    """Show and edit a bot's memory for one project (default: the current directory's repository)."""
    ctx.obj = _Target(bot, project)


@memory_app.command()
def show(
    ctx: typer.Context,
    project: str | None = typer.Option(None, "--project", help=PROJECT_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print {bot, project, path, entries} as JSON."),
) -> None:
    """Print every entry as `key: value`."""
    from openbot.state.legacy_memory import pending
    from openbot.views.escapes import visible, visible_json

    bot, slug, store = _store(ctx, project)
    entries = store.load()
    if offer := pending(bot, store):  # the Rust openbot's global memory, not imported here yet
        typer.echo(visible(offer), err=True)
    if as_json:
        doc = {"bot": bot, "project": slug, "path": str(store.path), "entries": entries}
        typer.echo(visible_json(json.dumps(doc, ensure_ascii=False, indent=2)))
    elif not entries:
        typer.echo(f"no memory for {bot} in {slug}")
    else:
        for key, value in entries.items():
            typer.echo(visible(f"{key}: {value}"))  # the bot wrote them


@memory_app.command("set")
def set_(
    ctx: typer.Context,
    key: str = typer.Argument(..., help="One line, up to 200 characters."),
    value: str = typer.Argument(..., help="Any text."),
    project: str | None = typer.Option(None, "--project", help=PROJECT_HELP),
) -> None:
    """Set one entry (replacing its old value)."""
    bot, slug, store = _store(ctx, project)
    store.set(key, value)
    typer.echo(f"set {key!r} for {bot} in {slug}")


@memory_app.command()
def remove(
    ctx: typer.Context,
    key: str = typer.Argument(..., help="The key to delete."),
    project: str | None = typer.Option(None, "--project", help=PROJECT_HELP),
) -> None:
    """Delete one entry; a key that is not there is an error."""
    bot, slug, store = _store(ctx, project)
    if not store.remove(key):
        keys = list(store.load())
        hint = f"keys: {', '.join(keys)}" if keys else "the memory is empty"
        raise NotFoundError(f"no memory key {key!r} for {bot} in {slug}", hint=hint)
    typer.echo(f"removed {key!r} for {bot} in {slug}")


@memory_app.command()
def clear(
    ctx: typer.Context,
    project: str | None = typer.Option(None, "--project", help=PROJECT_HELP),
    repair: bool = typer.Option(
        False,
        "--repair",
        help="If memory.json is damaged, move it aside to memory.json.corrupt-<time> and start empty. "
        "Without this a damaged file is never touched.",
    ),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask (needed when stdin is not a terminal)."),
) -> None:
    """Delete every entry (a copy is kept as memory.json.bak-<time>). With --repair, a damaged memory.json
    is moved aside instead of refused."""
    bot, slug, store = _store(ctx, project)
    try:
        count = len(store.load())
        if count and not yes:
            _confirm_clear(bot, slug, count)
        removed, backup = store.clear()
    except ConfigError:
        if not repair:
            raise
        moved = store.quarantine()
        typer.echo(f"moved the damaged memory file to {moved}; {bot} starts with empty memory in {slug}")
        return
    kept = f"; a copy is in {backup}" if backup else ""
    typer.echo(f"removed {removed} entr{'y' if removed == 1 else 'ies'} for {bot} in {slug}{kept}")


def _confirm_clear(bot: str, slug: str, count: int) -> None:
    """Ask on a terminal; refuse without one (a script says --yes)."""
    import sys

    from openbot.errors import UsageError

    what = f"delete all {count} entr{'y' if count == 1 else 'ies'} of {bot}'s memory in {slug}"
    if not sys.stdin.isatty():
        raise UsageError(f"memory clear would {what}", hint="pass --yes to confirm")
    if not typer.confirm(f"{what}?", default=False):
        raise typer.Exit(1)
