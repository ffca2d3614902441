"""The user's git hooks that live in the tree: which of them the bot's commits changed.

openbot runs no hook (gitcmd.py), but a repository whose `core.hooksPath` points into the checkout
(`.githooks`, husky's `.husky/_`) runs the files there at the user's next `git commit`, unconfined; so do
the hook managers that read their configuration from the tree (pre-commit, lefthook). A bot that changes
them is said at the end of the run and in the merge: the user's next commit runs the bot's code.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from openbot.errors import GitError
from openbot.git.gitcmd import git_bytes, open_repo

# Hook managers whose installed hook reads what to run from these files of the tree.
MANAGER_FILES = (".pre-commit-config.yaml", "lefthook.yml", ".lefthook.yml", "lefthook-local.yml")


def changed_hooks(common_dir: Path, workdir: Path, base: str, tip: str) -> list[str]:
    """The files of the user's hooks (in-tree hooks directory, hook managers' configuration) that differ
    between `base` and `tip`; [] when there are none or git cannot say."""
    if base == tip:
        return []
    dirs = hook_dirs(common_dir, workdir)
    try:
        out = git_bytes(common_dir, "diff-tree", "-r", "-z", "--no-renames", "--name-only", base, tip)
    except GitError:
        return []
    changed = [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]
    return [p for p in changed if p in MANAGER_FILES or any(PurePosixPath(p).is_relative_to(d) for d in dirs)]


def hook_dirs(common_dir: Path, workdir: Path) -> list[PurePosixPath]:
    """Where in the tree the user's hooks are: `core.hooksPath` when it points into the checkout (and its
    parent for husky's `_` directory, whose scripts run the hooks beside it), plus `.husky`."""
    dirs = [PurePosixPath(".husky")]
    config = open_repo(common_dir).config
    value = str(config["core.hooksPath"]) if "core.hooksPath" in config else ""
    if not value:
        return dirs
    path = Path(os.path.expanduser(value))
    full = os.path.normpath(path if path.is_absolute() else workdir / path)
    rel = os.path.relpath(full, os.path.normpath(workdir))
    if rel == "." or rel.startswith(".."):
        return dirs  # outside the checkout: no commit of the bot's reaches it
    inside = PurePosixPath(*Path(rel).parts)
    dirs.append(inside)
    if inside.name == "_" and inside.parent != PurePosixPath("."):
        dirs.append(inside.parent)
    return dirs


def said(files: list[str]) -> str:
    """One line naming the changed hook files."""
    shown = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
    return (
        f"the bot changed your git hooks ({shown}): your next `git commit` in this repository runs them; "
        "read them before you commit"
    )
