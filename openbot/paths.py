"""Where openbot keeps state: the OPENBOT_HOME layout and the shipped examples. Nothing is created here.

    $OPENBOT_HOME/skills/*.md                                   global skills
    $OPENBOT_HOME/bots/<bot>/config.md                          bot config
    $OPENBOT_HOME/bots/<bot>/skills/*.md                        bot-local skills
    $OPENBOT_HOME/bots/<bot>/workspaces/<project>/memory.json   memory
    $OPENBOT_HOME/bots/<bot>/workspaces/<project>/history/<session_id>/{metadata.json,events.jsonl}
    $OPENBOT_HOME/bots/<bot>/workspaces/<project>/runs/<run_id>/{run.json,conversation.json}
    <repo>/.openbot/bots/<bot>/config.md, <repo>/.openbot/skills/   committed with the code

A bot's state always lives under OPENBOT_HOME, also when its config.md is committed in the repo.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parent.parent
SHIPPED_BOTS = PACKAGE_ROOT / "bots"
SHIPPED_SKILLS = PACKAGE_ROOT / "skills"
# A bot's or a skill's name: also a file or directory name, so no separator, no leading dot.
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def home() -> Path:
    return Path(os.environ.get("OPENBOT_HOME") or Path.home() / ".openbot").expanduser()


def global_skills_dir() -> Path:
    return home() / "skills"


def bots_dir() -> Path:
    return home() / "bots"


def bot_home(bot: str) -> Path:
    """The bot's directory under OPENBOT_HOME (its state lives here even for repo-committed bots)."""
    return bots_dir() / bot


def bot_skills_dir(bot: str) -> Path:
    return bot_home(bot) / "skills"


def workspace_dir(bot: str, project: str) -> Path:
    return bot_home(bot) / "workspaces" / project


def history_dir(bot: str, project: str) -> Path:
    return workspace_dir(bot, project) / "history"


def runs_dir(bot: str, project: str) -> Path:
    return workspace_dir(bot, project) / "runs"


def memory_file(bot: str, project: str) -> Path:
    return workspace_dir(bot, project) / "memory.json"


def repo_bots_dir(repo_root: Path) -> Path:
    return repo_root / ".openbot" / "bots"


def repo_skills_dir(repo_root: Path) -> Path:
    return repo_root / ".openbot" / "skills"


def make_private_dir(path: Path) -> Path:
    """mkdir -p with user-only permissions on every directory it creates."""
    if path.is_dir():  # the usual case, on every write of a run's files: one stat
        return path
    # Path.mkdir(parents=True) gives the missing parents default permissions, not `mode`: create each one.
    missing = [d for d in (path, *path.parents) if not d.exists()]
    for d in reversed(missing):
        d.mkdir(mode=0o700, exist_ok=True)
    if not path.is_dir():
        path.mkdir(mode=0o700, exist_ok=True)  # raises FileExistsError when a file is in the way
    return path
