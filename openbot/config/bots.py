"""Bots on disk: finding them, creating them (from scratch or from a shipped example) and deleting them.

Where a repository commits a bot (`.openbot/bots/<bot>`) with the name of one of the user's own bots
(`$OPENBOT_HOME/bots/<bot>`), the user's own bot is the one used: a freshly cloned repository must not
replace it. `source="repo"` (`--bot-source repo`) picks the committed one; the other is always named.

A name that exists nowhere is a NotFoundError suggesting close names — never a silently created bot.
"""

from __future__ import annotations

import difflib
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from openbot import paths
from openbot.errors import ConfigError, NotFoundError, UsageError
from openbot.files import write_atomic

if (
    TYPE_CHECKING
):  # openbot.config.botconfig pulls in frontmatter, yaml and tomlkit: only load it to parse a config
    from openbot.config.botconfig import BotFile


SOURCES = ("home", "repo")


@dataclass(frozen=True)
class BotRef:
    name: str
    config_path: Path
    source: str  # "repo" | "home"
    other: Path | None = None  # the config of the same-named bot in the other source, not used
    root: Path | None = None  # where a symlinked config.md may lead (the repository); None: its own dir

    def load(self) -> BotFile:
        from openbot.config.botconfig import load_bot_file

        return load_bot_file(self.config_path, self.root)


def check_name(name: str) -> str:
    if not paths.NAME_RE.match(name):
        raise UsageError(
            f"invalid bot name {name!r}", hint="use letters, digits, '.', '_' or '-' (up to 64, no '/')"
        )
    return name


def _bots_in(root: Path, source: str, repo_root: Path | None = None) -> dict[str, BotRef]:
    if not root.is_dir():
        return {}
    return {
        d.name: BotRef(d.name, d / "config.md", source, root=repo_root)
        for d in sorted(root.iterdir())
        if (d / "config.md").is_file()
    }


def _repo_bots(repo_root: Path | None) -> dict[str, BotRef]:
    """Bots committed in the repository: their config.md is read as a file the agent may have written."""
    return _bots_in(paths.repo_bots_dir(repo_root), "repo", repo_root) if repo_root is not None else {}


def all_bots(repo_root: Path | None) -> dict[str, BotRef]:
    """Every visible bot by name; a home bot wins over a repo-committed bot of the same name."""
    bots = _repo_bots(repo_root)
    bots.update(_bots_in(paths.bots_dir(), "home"))
    return dict(sorted(bots.items()))


def find_bot(name: str, repo_root: Path | None, source: str | None = None) -> BotRef:
    """The bot called `name`: the home one when both exist, unless `source` picks one ("home" | "repo")."""
    check_name(name)
    if source is not None and source not in SOURCES:
        raise UsageError(f"unknown bot source {source!r}", hint="use --bot-source home or --bot-source repo")
    home = _bots_in(paths.bots_dir(), "home").get(name)
    repo = _repo_bots(repo_root).get(name)
    chosen, other = (repo, home) if source == "repo" or home is None else (home, repo)
    if source is not None and chosen is not None and chosen.source != source:
        chosen, other = None, chosen
    if chosen is not None:
        other_path = other.config_path if other else None
        return BotRef(chosen.name, chosen.config_path, chosen.source, other_path, chosen.root)
    if source is not None and other is not None:
        where = "committed in this repository" if source == "repo" else "in your OPENBOT_HOME"
        hint = f"there is one at {other.config_path} (--bot-source {other.source})"
        raise NotFoundError(f"no bot '{name}' {where}", hint=hint)
    bots = all_bots(repo_root)
    close = difflib.get_close_matches(name, list(bots), n=3)
    if name in list_examples():  # the name of a shipped example is not a bot until one is made from it
        raise NotFoundError(
            f"no bot named '{name}'; '{name}' is an example shipped with openbot",
            hint=f"make a bot from it first: openbot bots create {name} --from {name}",
        )
    if close:
        hint = "did you mean " + " or ".join(f"'{c}'" for c in close) + "?"
    elif bots:
        hint = f"known bots: {', '.join(bots)}"
    else:
        hint = "create one with `openbot bots create <name>`"
    raise NotFoundError(f"no bot named '{name}'", hint=hint)


def bots_by_source(repo_root: Path | None) -> list[tuple[BotRef, bool]]:
    """Every bot config on disk as (ref, shadowed): home bots, then the repo's; a shadowed one is used only
    with `--bot-source repo` (a committed bot of a home bot's name)."""
    home = _bots_in(paths.bots_dir(), "home")
    repo = _repo_bots(repo_root)
    rows = [(ref, False) for ref in home.values()]
    rows += [(ref, name in home) for name, ref in repo.items()]
    return sorted(rows, key=lambda r: (r[0].name, r[0].source))


def list_examples() -> list[str]:
    """Names of the example bots shipped in the project's top-level `bots/` directory."""
    root = paths.SHIPPED_BOTS
    if not root.is_dir():
        return []
    return sorted(d.name for d in root.iterdir() if (d / "config.md").is_file())


DEFAULT_PROMPT = "Describe what this bot should do in this repository, and how it knows it is done."


def create_bot(
    name: str, description: str = "", prompt: str = "", from_example: str | None = None, force: bool = False
) -> Path:
    """Write `$OPENBOT_HOME/bots/<name>/config.md` (from scratch or from a shipped example); return its path.

    With `force` an existing config.md (and example files) are overwritten; memory and history are kept.
    """
    from openbot.config.botconfig import parse_text, render

    check_name(name)
    dest = paths.bot_home(name)
    config_path = dest / "config.md"
    if config_path.exists() and not force:
        raise UsageError(f"bot '{name}' already exists at {config_path}", hint="pass --force to overwrite it")
    if from_example is None:
        text = render({"description": description} if description else {}, prompt or DEFAULT_PROMPT)
        files: dict[Path, bytes] = {}
    else:
        src = _example_dir(from_example)
        text = _example_config(src, description, prompt)
        files = {
            p.relative_to(src): p.read_bytes()
            for p in sorted(src.rglob("*"))
            if p.is_file() and p.name != "config.md" and "__pycache__" not in p.parts
        }
    parse_text(text, config_path)  # never write a config openbot itself cannot read back
    paths.make_private_dir(dest)
    for rel, data in files.items():
        paths.make_private_dir((dest / rel).parent)
        write_atomic(dest / rel, data)
    paths.make_private_dir(config_path.parent)
    write_atomic(config_path, text)
    return config_path


def _example_dir(example: str) -> Path:
    examples = list_examples()
    if example not in examples:
        hint = f"shipped examples: {', '.join(examples)}" if examples else "no examples are shipped"
        raise NotFoundError(f"no shipped example bot named '{example}'", hint=hint)
    return paths.SHIPPED_BOTS / example


def _example_config(src: Path, description: str, prompt: str) -> str:
    """The example's config.md, comments kept (a script it ships is copied beside it, path unchanged)."""
    import tomlkit

    from openbot.config.botconfig import parse_text
    from openbot.config.frontmatter import split_frontmatter

    example_path = src / "config.md"
    text = example_path.read_text(encoding="utf-8-sig")
    parse_text(text, example_path)  # a broken example fails here, naming the example's file
    fm, body = split_frontmatter(text, example_path)
    doc = tomlkit.parse(fm or "")
    # A relative `scripted:` path stays relative: a run resolves it from the bot's own directory, so the
    # copy keeps working when it is moved (e.g. committed into a repository's .openbot/bots/).
    if description:
        doc["description"] = description
    instructions = prompt or body
    return f"+++\n{tomlkit.dumps(doc).strip()}\n+++\n\n{instructions.strip()}\n"


def live_runs(name: str) -> list[tuple[str, int]]:
    """(run id, pid) of this bot's runs whose record says running and whose process is alive on this host."""
    from openbot.state.runstate import RunRecord, run_files

    live = []
    for record in run_files(name):
        try:
            rec = RunRecord.load(record)
        except ConfigError:
            continue  # a torn or unreadable record is no evidence of a live run
        if rec.process_alive():
            live.append((rec.run_id, rec.pid))
    return live


def refuse_if_running(name: str) -> None:
    """Deleting a running bot's directory pulls its history and worktree state out from under it."""
    live = live_runs(name)
    if live:
        run_id, pid = live[0]
        raise UsageError(
            f"bot '{name}' is running (run {run_id}, pid {pid}); deleting it now would crash that run",
            hint=f"stop it first (Ctrl-C in its terminal, or `kill {pid}`), then delete",
        )


def delete_bot(name: str, repo_root: Path | None = None, *, home: bool = False) -> Path:
    """Remove `$OPENBOT_HOME/bots/<name>` entirely (config, skills, memory, history); return that path.

    The caller confirms first. A bot committed in the repository is refused: it is a file in the user's repo.
    `home=True` targets the home bot even where a committed bot of that name shadows it.
    """
    target = paths.bot_home(name)
    if home:
        check_name(name)
        if not (target / "config.md").is_file():
            raise NotFoundError(f"no home bot named '{name}' (no {target / 'config.md'})")
    else:
        ref = find_bot(name, repo_root)
        if ref.source == "repo":
            hint = f"remove {ref.config_path.parent} with git yourself"
            if (target / "config.md").is_file():
                hint += f"; to delete the home bot '{name}' at {target} instead, pass --home"
            raise UsageError(
                f"bot '{name}' is committed in the repository at {ref.config_path}; openbot does not delete "
                "files in your repository",
                hint=hint,
            )
    refuse_if_running(name)
    shutil.rmtree(target)
    return target
