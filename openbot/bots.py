"""Finding bots: a repo's committed `.openbot/bots/<bot>` wins over `$OPENBOT_HOME/bots/<bot>`.

A name that exists nowhere is a NotFoundError suggesting close names — never a silently created bot.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path

from openbot import paths
from openbot.config import BotFile, load_bot_file
from openbot.errors import NotFoundError, UsageError

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


@dataclass(frozen=True)
class BotRef:
    name: str
    config_path: Path
    source: str  # "repo" | "home"

    def load(self) -> BotFile:
        return load_bot_file(self.config_path)


def check_name(name: str) -> str:
    if not NAME_RE.match(name):
        raise UsageError(
            f"invalid bot name {name!r}", hint="use letters, digits, '.', '_' or '-' (up to 64, no '/')"
        )
    return name


def _bots_in(root: Path, source: str) -> dict[str, BotRef]:
    if not root.is_dir():
        return {}
    return {
        d.name: BotRef(d.name, d / "config.md", source)
        for d in sorted(root.iterdir())
        if (d / "config.md").is_file()
    }


def all_bots(repo_root: Path | None) -> dict[str, BotRef]:
    """Every visible bot by name; repo-committed bots shadow home bots of the same name."""
    bots = _bots_in(paths.bots_dir(), "home")
    if repo_root is not None:
        bots.update(_bots_in(paths.repo_bots_dir(repo_root), "repo"))
    return dict(sorted(bots.items()))


def find_bot(name: str, repo_root: Path | None) -> BotRef:
    check_name(name)
    bots = all_bots(repo_root)
    if name in bots:
        return bots[name]
    close = difflib.get_close_matches(name, list(bots), n=3)
    if close:
        hint = "did you mean " + " or ".join(f"'{c}'" for c in close) + "?"
    elif bots:
        hint = f"known bots: {', '.join(bots)}"
    else:
        hint = "create one with `openbot bots create <name>`"
    raise NotFoundError(f"no bot named '{name}'", hint=hint)
