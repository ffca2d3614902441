"""`openbot bots list | create | show | delete | examples`: the bots in OPENBOT_HOME and the current repo.

Bots committed in the current checkout (`.openbot/bots/`) are listed too; a home bot shadows a committed
bot of the same name. The config parser is imported inside the commands so `openbot --help` stays fast.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import typer

from openbot.cli.completion import bot_names
from openbot.cli.typer_app import app
from openbot.envpolicy import bots_python
from openbot.errors import OpenbotError, UsageError
from openbot.views.escapes import visible, visible_json

bots_app = typer.Typer(name="bots", help="List, create, show and delete bots.", no_args_is_help=True)
app.add_typer(bots_app)


def repo_root() -> Path | None:
    """The checkout the user is in (a linked worktree counts), whose committed bots and skills are visible."""
    from openbot.git.repo import find_repo

    repo = find_repo(Path.cwd())
    return repo.workdir if repo else None


def _row(ref: Any, shadowed: bool) -> dict[str, Any]:
    row = {"name": ref.name, "source": ref.source, "path": str(ref.config_path), "shadowed": shadowed}
    try:
        bot_file = ref.load()
    except OpenbotError as e:
        return {**row, "description": "", "model": "", "error": e.one_line()}
    config = bot_file.config
    row["notices"] = list(bot_file.notices)  # legacy keys accepted but ignored
    return {**row, "description": config.description, "model": config.model, "error": None}


@bots_app.command("list")
def list_(as_json: bool = typer.Option(False, "--json", help="Print a JSON list of bots.")) -> None:
    """Every bot: name, source (home/repo), description and model; an invalid config is shown, not fatal."""
    from openbot.config.bots import bots_by_source

    rows = [_row(ref, shadowed) for ref, shadowed in bots_by_source(repo_root())]
    if as_json:
        typer.echo(visible_json(json.dumps(rows, ensure_ascii=False, indent=2)))
        return
    if not rows:
        typer.echo("no bots yet; create one with `openbot bots create <name>`")
        return
    width = max(len(r["name"]) for r in rows)
    # The model column is as wide as the longest model (a scripted path or a long local name included),
    # capped so one very long name cannot push every description off the screen.
    models = min(max((len(r["model"] or "") for r in rows if not r["error"]), default=0), 40)
    for r in rows:
        model = r["model"] or ""
        model = model if len(model) <= models else model[: models - 1] + "…"
        what = f"invalid: {r['error']}" if r["error"] else f"{model:<{models}}  {r['description']}".rstrip()
        mark = "  (shadowed by your home bot; --bot-source repo runs it)" if r["shadowed"] else ""
        typer.echo(visible(f"{r['name']:<{width}}  {r['source']:<4}  {what}{mark}"))
    for r in rows:
        for notice in r.get("notices", []):
            typer.echo(visible(notice), err=True)


@bots_app.command()
def create(
    name: str = typer.Argument(..., help="Letters, digits, '.', '_' or '-'."),
    description: str = typer.Option("", "-d", "--description", help="One line shown by `bots list`."),
    prompt: str = typer.Option("", "-p", "--prompt", help="The bot's instructions (markdown)."),
    from_example: str | None = typer.Option(None, "--from", help="Copy a shipped example (`bots examples`)."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing config.md (memory is kept)."),
) -> None:
    """Create $OPENBOT_HOME/bots/<name>/config.md, from scratch or from a shipped example."""
    from openbot.config.bots import create_bot

    path = create_bot(name, description, prompt, from_example, force)
    typer.echo(f"created {name}: {path}")
    typer.echo(f"edit its instructions there, then: openbot run {name}")


@bots_app.command()
def show(
    name: str = typer.Argument(..., help="The bot to show.", autocompletion=bot_names),
    as_json: bool = typer.Option(False, "--json", help="Print it all as JSON."),
) -> None:
    """The bot's path, source, every config key with its effective value, origin and meaning, and its
    instructions."""
    import dataclasses

    from openbot.agent.promptsize import prompt_size
    from openbot.config.bots import find_bot
    from openbot.config.frontmatter import toml_value
    from openbot.config.keys import BotConfig
    from openbot.config.model_defaults import model_defaults
    from openbot.config.verify import describe
    from openbot.config.workmode import choose

    ref = find_bot(name, repo_root())
    bot_file = ref.load()
    for notice in bot_file.notices:
        typer.echo(visible(notice), err=True)
    config = dataclasses.asdict(bot_file.config)
    docs = {f.name: f.metadata["doc"] for f in dataclasses.fields(BotConfig)}
    verification, verify_lines = describe(bot_file.config, repo_root(), "verify" in bot_file.values)
    work = choose(bot_file.config, bot_file.values)
    size = prompt_size(bot_file.config, bot_file.instructions, work.mode)
    by_model = sorted(set(model_defaults(bot_file.values)) - set(bot_file.values))  # a small model's
    if as_json:
        doc = {
            "name": name,
            "source": ref.source,
            "path": str(ref.config_path),
            "config": config,
            "set_in_file": sorted(bot_file.values),
            "set_by_model": by_model,
            "docs": docs,
            "verification": verification,
            "instructions": bot_file.instructions,
            "prompt_tokens": {"system": size.system, "tools": size.tools, "estimate": True},
            "work_mode": {"mode": work.mode, "why": work.why},
        }
        typer.echo(visible_json(json.dumps(doc, ensure_ascii=False, indent=2)))
        return
    # A committed bot may come from anyone with push access (or a bot's own branch): what the user reviews
    # before `openbot trust` must be what is there, so escape sequences are shown, never interpreted.
    typer.echo(visible(f"name: {name}\nsource: {ref.source}\npath: {ref.config_path}\nconfig:"))
    shown = {key: toml_value(value) for key, value in config.items()}
    width = max(map(len, config))
    value_width = min(max(map(len, shown.values())), 24)  # a long model path must not push every doc right
    for key, value in shown.items():
        origin = "config.md" if key in bot_file.values else "model" if key in by_model else "default"
        typer.echo(visible(f"  {key:<{width}} = {value:<{value_width}}  {origin:<9}  # {docs[key]}"))
    typer.echo(visible("\n".join(verify_lines)))
    typer.echo(visible(work.said()))
    typer.echo(f"prompt: {size.said()}\n" + visible(f"python3: {bots_python(os.environ)}"))  # its commands'
    typer.echo("instructions:")
    typer.echo(visible(bot_file.instructions or "(none)"))


@bots_app.command()
def edit(name: str = typer.Argument(..., help="The bot to edit.", autocompletion=bot_names)) -> None:
    """Open the bot's config.md in $VISUAL or $EDITOR (else vi), then check it: a config that does not load
    is said in one line (exit 2), as `openbot run` would say it."""
    import shlex

    from openbot import gate
    from openbot.config.bots import find_bot

    ref = find_bot(name, repo_root())
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    try:
        argv = [*shlex.split(editor), str(ref.config_path)]
        done = gate.run(gate.BOTS_EDITOR, argv)
    except (ValueError, OSError) as e:
        raise UsageError(f"cannot run the editor {editor!r}: {e}", hint="set VISUAL or EDITOR") from None
    if done.returncode != 0:
        raise UsageError(
            f"the editor {editor!r} exited with {done.returncode}: {ref.config_path} not checked"
        )
    ref.load()  # ConfigError: exit 2, one line naming the file and the key
    typer.echo(visible(f"{ref.config_path}: valid"))


@bots_app.command()
def delete(
    name: str = typer.Argument(..., help="The home bot to delete.", autocompletion=bot_names),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask; needed when stdin is not a terminal."),
    home: bool = typer.Option(
        False, "--home", help="Delete the home bot even where the repository commits a bot of that name."
    ),
) -> None:
    """Delete a home bot entirely: config, skills, and its memory and history in every project."""
    from openbot import paths
    from openbot.config.bots import delete_bot, find_bot, refuse_if_running

    root = repo_root()
    target = paths.bot_home(name)
    # Only a deletion that will happen asks: a refused or unknown bot fails first, without a prompt.
    is_home = home or find_bot(name, root).source == "home"
    if is_home:
        refuse_if_running(name)
    if not yes and is_home and (target / "config.md").is_file():
        if not sys.stdin.isatty():
            raise UsageError(f"deleting {target} needs confirmation", hint="pass --yes")
        typer.confirm(f"delete {target} with all its memory and history?", abort=True)
    delete_bot(name, root, home=home)
    typer.echo(f"deleted {target}")


@bots_app.command()
def examples() -> None:
    """The example bots shipped with openbot, for `bots create <name> --from <example>`."""
    from openbot import paths
    from openbot.config.botconfig import load_bot_file
    from openbot.config.bots import list_examples

    names = list_examples()
    if not names:
        typer.echo(f"no example bots are shipped (in {paths.SHIPPED_BOTS})")
        return
    width = max(map(len, names))
    for example in names:
        try:
            description = load_bot_file(paths.SHIPPED_BOTS / example / "config.md").config.description
        except OpenbotError as e:
            description = f"invalid: {e.one_line()}"
        typer.echo(f"{example:<{width}}  {description}")
