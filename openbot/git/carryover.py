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
from collections.abc import Iterable
from pathlib import Path

from openbot.git.userrepo import ConfigEntries, get

# Config the bot's commits need to run the same filters as the user's: filter drivers (`filter.<x>.*`)
# and git-lfs's settings. Read from the user's whole config (global included): inside the sandbox the
# agent's $HOME is a private one, where the user's ~/.gitconfig is not.
CARRIED_PREFIXES = ("filter.", "lfs.")
# What openbot's setup step makes in the bot's checkout (openbot.run.setup: the virtualenv, an editable
# install's metadata): the run repository's info/exclude lists it, so the agent's `git add -A` and the WIP
# commit leave it out. Files a project tracks stay tracked (exclude rules apply to untracked files only).
SETUP_EXCLUDES = "# openbot: made by the run's setup step, never committed\n/.venv/\n*.egg-info/\n"
# Settings of the user's repository the agent's commits should keep (who commits, line endings).
COPIED_CONFIG = ("user.name", "user.email", "core.autocrlf", "core.eol", "core.symlinks", "core.ignorecase")


def carried_config(user_config: Iterable[tuple[str, str | None]]) -> dict[str, str]:
    """`filter.*` and `lfs.*` entries of the user's config (userrepo.config; last value wins), plus
    `core.hooksPath`."""
    found: dict[str, str] = {}
    for name, value in user_config:
        if name.lower().startswith(CARRIED_PREFIXES) or name.lower() == "core.hookspath":
            found[name] = str(value)
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


def config_basics(cfg: ConfigEntries) -> str:
    """The `[core]` a run repository needs, plus the settings of COPIED_CONFIG the user has."""
    fmt = get(cfg, "extensions.objectformat")
    lines = ["[core]", f"\trepositoryformatversion = {1 if fmt else 0}", "\tbare = false"]
    lines += ["\tlogallrefupdates = true"]
    sections: dict[str, list[str]] = {"core": lines[1:]}
    for key in COPIED_CONFIG:
        if (value := get(cfg, key)) is not None:
            section, _, var = key.partition(".")
            sections.setdefault(section, []).append(f"\t{var} = {_quote(value)}")
    if fmt:
        sections["extensions"] = [f"\tobjectformat = {fmt}"]
    return "".join(f"[{s}]\n" + "".join(f"{v}\n" for v in vs) for s, vs in sections.items())


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def wip_filters(git_dir: Path) -> dict[str, str]:
    """The user's filter drivers for a WIP commit of `git_dir`'s files (wip.py), LFS objects going to
    the user's own LFS store."""
    from openbot.git import lfs
    from openbot.git.userrepo import config as read_config

    config = carried_config(read_config(git_dir, git_dir=True))
    filters = {k: v for k, v in config.items() if k.lower().startswith("filter.")}
    filters["lfs.storage"] = str(lfs.storage(git_dir))
    return filters
