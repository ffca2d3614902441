"""`openbot skills list | show | search | install | remove`: the markdown skills bots get in their prompt.

`skills list <bot>` prints exactly what that bot's prompt gets (`config.skills.load_skills`); without a
bot it prints every skill in reach: all shipped ones, the global ones and the current repo's. A skill
file that does not load is listed as `invalid: <reason>` (runs skip it) and can still be removed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import typer

from openbot.cli.bots_cmd import repo_root
from openbot.cli.typer_app import app
from openbot.errors import NotFoundError, UsageError
from openbot.views.escapes import visible, visible_json

skills_app = typer.Typer(
    name="skills", help="List, show, search, install and remove skills.", no_args_is_help=True
)
app.add_typer(skills_app)

BOT_HELP = "Use this bot's skills (bot-local ones included)."


def _skills(bot: str | None) -> tuple[list[Any], list[Any]]:
    """(skills, invalid skill files): a bot's exactly as its prompt gets them, or every one in reach."""
    from openbot import paths
    from openbot.config.bots import find_bot
    from openbot.config.skills import check_skills, scan

    root = repo_root()
    if bot is not None:
        config = find_bot(bot, root).load().config
        return check_skills(bot, root, config.shipped_skills)
    dirs = [(paths.SHIPPED_SKILLS, "shipped"), (paths.global_skills_dir(), "global")]
    dirs += [(paths.repo_skills_dir(root), "repo")] if root else []
    found: list[object] = []
    invalid: list[object] = []
    for directory, source in dirs:
        ok, bad = scan(directory, source)
        found += ok
        invalid += bad
    return found, invalid


def _dest(global_: bool, bot: str | None) -> Path:
    """The directory `install`/`remove` write to: exactly one of --global and --bot."""
    from openbot import paths
    from openbot.config.bots import find_bot

    if global_ == (bot is not None):
        raise UsageError("say where: pass exactly one of --global or --bot <bot>")
    if bot is None:
        return paths.global_skills_dir()
    find_bot(bot, repo_root())
    return paths.bot_skills_dir(bot)


@skills_app.command("list")
def list_(
    bot: str | None = typer.Argument(None, help="Show exactly the skills this bot's prompt gets."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON list of skills."),
) -> None:
    """Skills with source, description and path (with a bot: exactly those its prompt gets).

    A skill file that does not load is listed as `invalid: <reason>`; runs leave it out."""
    skills, invalid = _skills(bot)
    rows = [
        {"name": s.name, "source": s.source, "description": s.description, "path": str(s.path), "error": None}
        for s in skills
    ]
    rows += [
        {"name": i.name, "source": i.source, "description": "", "path": str(i.path), "error": i.reason}
        for i in invalid
    ]
    if as_json:
        typer.echo(visible_json(json.dumps(rows, ensure_ascii=False, indent=2)))
        return
    if not rows:
        typer.echo(f"no skills for {bot}" if bot else "no skills found")
        return
    width = max(len(r["name"]) for r in rows)
    for r in rows:
        what = f"invalid: {r['error']}" if r["error"] else f"{r['description']}  ({r['path']})"
        typer.echo(visible(f"{r['name']:<{width}}  {r['source']:<7}  {what}"))


def _bot_owning(name: str) -> str:
    """The first bot (home, then the repository's) with a skill of its own named `name`, or ""."""
    from openbot.config.bots import all_bots
    from openbot.config.skills import scan

    for ref in all_bots(repo_root()).values():
        if any(s.name == name for s in scan(ref.config_path.parent / "skills", "bot")[0]):
            return ref.name
    return ""


@skills_app.command()
def show(
    name: str = typer.Argument(..., help="The skill to show."),
    bot: str | None = typer.Option(None, "--bot", "-b", help=BOT_HELP),
) -> None:
    """A skill's source, path, description and body."""
    import difflib

    from openbot.errors import ConfigError

    found, invalid = _skills(bot)
    # Later entries are more specific, so the last one of a name is the one in effect.
    skills = {s.name: s for s in found}
    broken = {i.name: i for i in invalid}
    if name not in skills and name in broken:
        raise ConfigError(broken[name].reason)  # it names the file and the fix
    if name not in skills:
        close = difflib.get_close_matches(name, list(skills), n=3)
        hint = f"did you mean '{close[0]}'?" if close else f"skills: {', '.join(skills) or 'none'}"
        owner = _bot_owning(name) if bot is None else None
        if owner:  # a bot's own skill is in reach only with --bot
            hint = f"it is bot {owner}'s own skill: openbot skills show {name} --bot {owner}"
        raise NotFoundError(f"no skill named '{name}'" + (f" for {bot}" if bot else ""), hint=hint)
    s = skills[name]
    # A bot can write its own skills: their text is shown, never interpreted by the terminal.
    typer.echo(visible(f"name: {s.name}\nsource: {s.source}\npath: {s.path}\ndescription: {s.description}\n"))
    typer.echo(visible(s.body))


@skills_app.command()
def install(
    source: str = typer.Argument(
        ...,
        help="A .md file, a folder of skills, a SKILL.md folder, a git URL or a registry id (owner/repo/x).",
    ),
    global_: bool = typer.Option(
        False, "--global", "-g", help="Install for every bot ($OPENBOT_HOME/skills)."
    ),
    bot: str | None = typer.Option(None, "--bot", "-b", help="Install for this bot only."),
    force: bool = typer.Option(False, "--force", help="Replace installed skills of the same name."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Install a downloaded skill without asking."),
) -> None:
    """Copy skills into the global or a bot's skills directory.

    A skill from a git URL or the registry is pinned to the commit fetched and its text is shown; it is
    installed with --yes or a yes at the prompt (a terminal is needed to ask)."""
    from openbot.config.skill_install import install_skill

    dest = _dest(global_, bot)
    for s in install_skill(source, dest, force=force, approve=lambda r, found: _approve(r, found, yes)):
        typer.echo(visible(f"installed {s.name}: {s.path}"))


def _approve(remote: Any, found: list[Any], yes: bool) -> None:
    """Show what came over the network, pinned; go on only with --yes or the user's yes."""
    import sys

    typer.echo(visible(f"{remote.source}: {len(found)} skill(s) from {remote.url} at commit {remote.commit}"))
    for s in found:
        extra = [
            os.path.relpath(os.path.join(top, f), s.root)
            for top, _, files in os.walk(s.root)  # no link followed
            for f in sorted(files)
            if os.path.join(top, f) != str(s.path)
        ]
        typer.echo(
            visible(f"\n── {s.name}: {s.description}" + (f" (also: {', '.join(extra)})" if extra else ""))
        )
        typer.echo(visible(s.body))
    if yes:
        return
    if not sys.stdin.isatty():
        raise UsageError(
            f"{remote.source} was downloaded, not installed: its text is above",
            hint="pass --yes to install it",
        )
    typer.confirm("install it?", abort=True)


@skills_app.command()
def remove(
    name: str = typer.Argument(..., help="The skill to delete."),
    global_: bool = typer.Option(False, "--global", "-g", help="From $OPENBOT_HOME/skills."),
    bot: str | None = typer.Option(None, "--bot", "-b", help="From this bot's skills."),
) -> None:
    """Delete an installed skill (its file, or its whole SKILL.md folder)."""
    from openbot.config.skill_install import remove_skill

    typer.echo(f"removed {remove_skill(name, _dest(global_, bot))}")


@skills_app.command()
def search(
    query: str = typer.Argument(..., help="Words to look for in the skills.sh registry."),
    limit: int = typer.Option(10, "--limit", "-l", min=1, help="How many results to show."),
) -> None:
    """Search the skills.sh registry (as the Rust openbot did); install a result by its id."""
    from openbot.config.skill_registry import search as search_registry

    total, found = search_registry(query, limit)
    if not found:
        typer.echo(f"no skills found for {query!r}")
        return
    typer.echo(visible(f"{total} skill{'' if total == 1 else 's'} for {query!r}:\n"))
    width = max(len(f.id) for f in found)
    for f in found:
        typer.echo(visible(f"  {f.id:<{width}}  {f.installs:>10,} installs"))
    typer.echo("\ninstall one: openbot skills install <id> (--bot <bot> | --global)")
