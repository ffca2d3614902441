"""The WIP commit: what the agent left uncommitted in its checkout, saved as a commit on its branch.

It is made in openbot's private git dir (the carrier, see home.py), never in the run's repository: the
agent could have planted symlinks there (reflogs, index, object directories) that a write would follow
out of the sandbox. pygit2 runs no hook. The carrier borrows only the user's objects, where the parent
was already imported with verification, so nothing the agent stored is read here; only the checkout's
files are, as content (a symlink is committed as a symlink, never followed).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from openbot.errors import GitError


def commit_wip(
    carrier: Path, checkout: Path, parent: str, message: str, sig: Any, stat_cache: Path | None = None
) -> str | None:
    """Commit everything in `checkout` (untracked too, .gitignore respected) on top of `parent`.

    `stat_cache` is the run's own index: copied, it spares hashing every unchanged file (it can only
    hide the agent's own changes from its WIP commit, nothing else). The commit's objects go to the
    carrier's own store; returns its sha, or None if nothing changed. GitError when it cannot be made."""
    import pygit2

    try:
        if stat_cache is not None:
            _copy_plain(stat_cache, carrier / "index")
        repo = _open(carrier, checkout)
        base = repo[parent].peel(pygit2.Commit)
        index = repo.index
        index.read_tree(base.tree)  # keeps the stat data of entries whose content is unchanged
        _stage_everything(repo, index, checkout)
        tree = index.write_tree()
        if tree == base.tree_id:
            return None
        return str(repo.create_commit(None, sig, sig, message, tree, [base.id]))
    except (pygit2.GitError, KeyError, ValueError, OSError) as e:
        why = (str(e).splitlines() or [type(e).__name__])[0]
        raise GitError(f"could not commit the work left in {checkout}: {why}") from e


def _open(carrier: Path, checkout: Path) -> Any:
    import pygit2

    repo = pygit2.Repository(str(carrier), pygit2.enums.RepositoryOpenFlag.NO_SEARCH)
    repo.workdir = str(checkout)
    try:
        repo.index  # noqa: B018 - reads it
    except pygit2.GitError:
        (carrier / "index").unlink()  # not an index libgit2 reads: only the stat cache is lost
        return _open(carrier, checkout)
    return repo


def _copy_plain(src: Path, dst: Path, limit: int = 1 << 30) -> None:
    """Copy `src` if it is a regular file (never through a symlink, never a FIFO) of at most `limit`."""
    try:
        fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if stat.S_ISREG(st.st_mode) and st.st_size <= limit:
            dst.write_bytes(f.read(limit))


def _stage_everything(repo: Any, index: Any, workdir: Path) -> None:
    """`git add -A`, except a repository nested in the checkout (a bot's clone) and special files."""
    for path in repo.status(untracked_files="all", ignored=False):
        if path.endswith("/"):
            continue  # a nested repository; index.add_all() would fail on it
        try:
            mode = os.lstat(workdir / path).st_mode
        except FileNotFoundError:
            if path in index:
                index.remove(path)
            continue
        if stat.S_ISREG(mode) or stat.S_ISLNK(mode):  # a FIFO would block the read forever
            index.add(path)
