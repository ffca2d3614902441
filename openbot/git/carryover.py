"""What of the user's repository a run's own repository keeps, so the bot's commits behave as the user's:
the repository's hooks (pre-commit, husky, ...) and its filter drivers (git-crypt-like clean filters,
git-lfs).

Hooks and filters run only in the agent's own commands, inside the sandbox: copying them grants nothing
the user's checkout would not run anyway. openbot's own git calls on the user's repository keep hooks off.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path
from typing import Any

# Config the bot's commits need to run the same filters as the user's: filter drivers (`filter.<x>.*`)
# and git-lfs's settings. Read from the user's whole config (global included): inside the sandbox the
# agent's $HOME is a private one, where the user's ~/.gitconfig is not.
CARRIED_PREFIXES = ("filter.", "lfs.")


def carried_config(user_config: Any) -> dict[str, str]:
    """`filter.*` and `lfs.*` entries of the user's config (last value wins), plus `core.hooksPath`."""
    found: dict[str, str] = {}
    for entry in user_config:
        name = str(entry.name)
        if name.lower().startswith(CARRIED_PREFIXES) or name.lower() == "core.hookspath":
            found[name] = str(entry.value)
    return found


def copy_hooks(common_dir: Path, git_dir: Path, hooks_path: str | None) -> list[str]:
    """Copy the user's hooks (not the `.sample`s) into the run repository's `hooks/`; returns their names.

    With `core.hooksPath` set the run repository keeps that setting instead (an in-tree directory such as
    `.husky/_` is in the bot's checkout too), and nothing is copied."""
    if hooks_path:
        return []
    src, dest = common_dir / "hooks", git_dir / "hooks"
    copied = []
    try:
        entries = sorted(src.iterdir())
    except OSError:
        return []
    dest.mkdir(exist_ok=True)
    for hook in entries:
        if hook.name.endswith(".sample") or not hook.is_file():
            continue
        mode = hook.stat().st_mode
        if not mode & stat.S_IXUSR:
            continue  # git runs only executable hooks
        shutil.copyfile(hook, dest / hook.name)
        os.chmod(dest / hook.name, 0o755)
        copied.append(hook.name)
    return copied


def config_text(entries: dict[str, str]) -> str:
    """`entries` (`filter.crypt.clean = …`) as git config file text, values quoted."""
    sections: dict[str, list[str]] = {}
    for name, value in entries.items():
        section, _, rest = name.partition(".")
        sub, _, var = rest.rpartition(".")
        header = f'[{section} "{_escape(sub)}"]' if sub else f"[{section}]"
        sections.setdefault(header, []).append(f'\t{var} = "{_escape(value)}"')
    return "".join(header + "\n" + "".join(f"{v}\n" for v in lines) for header, lines in sections.items())


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
