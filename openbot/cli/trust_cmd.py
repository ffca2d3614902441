"""`openbot trust`: allow the bots and skills a repository commits under `.openbot/` (see state/trust.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from openbot.cli.typer_app import app
from openbot.errors import NotFoundError, UsageError


@app.command("trust")
def trust_command(
    bot: Optional[str] = typer.Argument(None, help="The committed bot to trust (default: all of them)."),  # noqa: UP045
    list_: bool = typer.Option(False, "--list", help="Show what is trusted, and whether it changed since."),
    revoke: bool = typer.Option(False, "--revoke", help="Withdraw trust (from one bot, or this whole repo)."),
) -> None:
    """Trust the bots and skills committed in this repository, once reviewed; a change needs trust again."""
    from openbot import paths
    from openbot.config.bots import check_name
    from openbot.state import trust
    from openbot.state.project import resolve_project

    if list_ and (revoke or bot):
        raise UsageError("--list takes no bot and no --revoke", hint="openbot trust --list")
    project = resolve_project(Path.cwd())
    if list_:
        _list(project.repo.workdir if project.repo else None, project.identity)
        return
    if project.repo is None:
        raise UsageError(f"not inside a git repository: {Path.cwd()}", hint="cd into the repository first")
    root, store = project.repo.workdir, trust.TrustStore.load(project.identity)
    if revoke:
        keys = [trust.bot_key(check_name(bot))] if bot else list(store.entries)
        removed = [k for k in keys if store.remove(k)]
        store.save()
        typer.echo(f"revoked: {', '.join(removed)}" if removed else "nothing was trusted here")
        return
    names = [check_name(bot)] if bot else sorted(_committed(paths.repo_bots_dir(root)))
    if bot and bot not in _committed(paths.repo_bots_dir(root)):
        raise NotFoundError(f"no bot '{bot}' is committed in {paths.repo_bots_dir(root)}")
    subjects = [trust.bot_subject(root, n) for n in names] + [trust.skills_subject(root)]
    subjects = [s for s in subjects if s.sha256]
    if not subjects:
        raise NotFoundError(f"nothing to trust: {root / '.openbot'} commits no bots and no skills")
    for subject in subjects:
        store.add(subject, **_about(subject, root))
        wants = store.entries[subject.key].get("asks", "")
        typer.echo(f"trusted {subject.key} ({subject.path}, sha256 {subject.sha256[:12]})" + _paren(wants))
    store.save()


def _committed(bots_dir: Path) -> set[str]:
    return {d.name for d in bots_dir.iterdir() if (d / "config.md").is_file()} if bots_dir.is_dir() else set()


def _about(subject: object, root: Path) -> dict[str, str]:
    """What a bot asked for when it was trusted (shown by --list); only a config that parses is trusted."""
    from openbot.config.botconfig import load_bot_file
    from openbot.state import trust

    assert isinstance(subject, trust.Subject)
    if subject.key == trust.SKILLS:
        return {}
    # read as a run reads it: a config.md linked elsewhere in the repository is fine, out of it refused
    return {"asks": trust.asks(load_bot_file(subject.path / "config.md", root).values)}


def _paren(text: str) -> str:
    return f": it asks for {text}" if text else ""


def _list(root: Path | None, identity: str) -> None:
    from openbot.state import trust

    rows = trust.all_stores()
    if not rows:
        typer.echo("nothing is trusted (review a repository's .openbot/, then `openbot trust`)")
        return
    for ident, entries in rows:
        here = root is not None and ident == identity
        typer.echo(f"{ident}" + ("  (this repository)" if here else ""))
        for key, entry in sorted(entries.items()):
            state = ""
            if here and root is not None:
                state = _state(root, key, entry)
            when = entry.get("trusted_at", "")
            typer.echo(f"  {key:<24} sha256 {str(entry.get('sha256'))[:12]}  {when}{state}")


def _state(root: Path, key: str, entry: dict[str, object]) -> str:
    """Whether a trusted entry still matches this checkout (a link out or a FIFO there: refused)."""
    from openbot.errors import ConfigError
    from openbot.state import trust

    try:
        current = trust.skills_subject(root) if key == trust.SKILLS else trust.bot_subject(root, key[4:])
    except ConfigError as e:
        return f"  REFUSED: {e.message}"
    return "  current" if current.sha256 == entry.get("sha256") else "  CHANGED: needs trust again"
