"""The WIP commit: what the agent left uncommitted in its checkout, saved as a commit on its branch.

It is made in openbot's private git dir (the carrier, see home.py), never in the run's repository: the
agent could have planted symlinks there (reflogs, index, object directories) that a write would follow
out of the sandbox. pygit2 runs no hook. The carrier borrows only the user's objects, where the parent
was already imported with verification, so nothing the agent stored is read here; only the checkout's
files are, as content (a symlink is committed as a symlink, never followed).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pygit2

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from openbot.errors import GitError
from openbot.git.gitcmd import NO_HOOKS, git_env, run_bounded
from openbot.git.specials import SUFFIX, defuse


@dataclass(frozen=True)
class WipLimits:
    """How much of the agent's uncommitted work a WIP commit takes (config: wip_max_file_mb,
    wip_max_total_mb): a 4 GB sparse file took 232 s and 300 MB of noise grew the user's .git by 301 MB."""

    file_bytes: int = 10 << 20
    total_bytes: int = 100 << 20


DEFAULT_LIMITS = WipLimits()


def left_out_line(left_out: tuple[str, ...]) -> str:
    shown = ", ".join(left_out[:5]) + (f" and {len(left_out) - 5} more" if len(left_out) > 5 else "")
    return f"left out of the WIP commit: {shown}"


def wip_limits(max_file_mb: float, max_total_mb: float) -> WipLimits:
    """The limits a bot's config sets (its wip_max_file_mb and wip_max_total_mb)."""
    return WipLimits(int(max_file_mb * (1 << 20)), int(max_total_mb * (1 << 20)))


# Build output a WIP commit never holds (unless the project tracks it): caches and byte code.
JUNK_DIRS = frozenset({"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"})


def commit_wip(
    carrier: Path,
    checkout: Path,
    parent: str,
    message: str,
    sig: pygit2.Signature,
    stat_cache: Path | None = None,
    filters: Callable[[], dict[str, str]] | None = None,
    gitlinks: dict[str, str] | None = None,
    limits: WipLimits = DEFAULT_LIMITS,
    left_out: dict[str, str] | None = None,
) -> str | None:
    """Commit everything in `checkout` (untracked too, .gitignore respected) on top of `parent`.

    `stat_cache` is the run's own index: copied, it spares hashing every unchanged file (it can only
    hide the agent's own changes from its WIP commit, nothing else). The commit's objects go to the
    carrier's own store; returns its sha, or None if nothing changed. GitError when it cannot be made.

    `filters` reads the user's filter config (carryover.carried_config; a git process, so only when
    something changed): a file whose attributes name a filter
    is staged through git's own clean filter (a git-crypt-like filter, git-lfs: the pointer is committed,
    the object stored in `lfs_storage`), as the user's own `git add` would.

    Submodules are never looked into (libgit2 would open their repositories, the agent's): `gitlinks`
    (path → commit, subhome.py) says what each of openbot's submodules holds now. What `limits` leaves out
    (_Budget) goes into `left_out` (path → why) and the message."""
    import pygit2

    try:
        repo, index, base, changed, unreadable = _status(carrier, checkout, parent, stat_cache)
        if not changed and not gitlinks:
            return None
        renamed = ", ".join(f"{p} → {p}{SUFFIX}" for p in unreadable)
        message += f"\n\nopenbot renamed what git could not read: {renamed}" if unreadable else ""
        config = filters() if filters is not None and changed else {}
        skipped = left_out if left_out is not None else {}
        budget = _Budget(limits, skipped, _refused(config, checkout, base.tree))
        _stage_everything(repo, index, checkout, changed, config, budget)
        message += _said_left_out(skipped)
        for path, sha in (gitlinks or {}).items():
            index.add(pygit2.IndexEntry(path, pygit2.Oid(hex=sha), pygit2.enums.FileMode.COMMIT))
        tree = index.write_tree()
        if tree == base.tree_id:
            return None
        return str(repo.create_commit(None, sig, sig, message, tree, [base.id]))
    except (pygit2.GitError, KeyError, ValueError, OSError) as e:
        why = (str(e).splitlines() or [type(e).__name__])[0]
        raise GitError(f"could not commit the work left in {checkout}: {why}") from e


def uncommitted(carrier: Path, checkout: Path, parent: str, stat_cache: Path | None = None) -> list[str]:
    """What a WIP commit on `parent` would take (`git status`'s paths), read in-process; [] when unread."""
    import pygit2

    try:
        return _status(carrier, checkout, parent, stat_cache)[3]
    except (pygit2.GitError, KeyError, ValueError, OSError):
        return []


def _status(
    carrier: Path, checkout: Path, parent: str, stat_cache: Path | None
) -> tuple[pygit2.Repository, pygit2.Index, pygit2.Commit, list[str], list[str]]:
    """The carrier on `checkout`, its index at `parent`; the changed paths; what defuse renamed aside."""
    import pygit2

    if stat_cache is not None:
        _copy_plain(stat_cache, carrier / "index")
    unreadable = defuse(checkout)
    repo = _open(carrier, checkout)
    base = repo[parent].peel(pygit2.Commit)
    index = repo.index
    index.read_tree(base.tree)  # keeps the stat data of entries whose content is unchanged
    return repo, index, base, _changed(index, checkout), unreadable


def _said_left_out(skipped: dict[str, str]) -> str:
    if not skipped:
        return ""
    more = f" and {len(skipped) - 20} more" if len(skipped) > 20 else ""
    return (
        "\n\nopenbot left out of this commit: "
        + ", ".join(f"{p} ({w})" for p, w in list(skipped.items())[:20])
        + more
    )


def _open(carrier: Path, checkout: Path) -> pygit2.Repository:
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


def _stage_everything(
    repo: pygit2.Repository,
    index: pygit2.Index,
    workdir: Path,
    changed: list[str],
    filters: dict[str, str],
    budget: _Budget,
) -> None:
    """`git add -A`, except a repository nested in the checkout (a bot's clone), special files, the
    setup step's `.venv/` (unless the project tracks it) and what `budget` leaves out."""
    import pygit2

    for path in changed:
        if path.endswith("/"):
            continue  # a nested repository; index.add_all() would fail on it
        try:
            st = os.lstat(workdir / path)
            mode = st.st_mode
        except FileNotFoundError:
            # A submodule without its directory was never checked out here: it keeps its commit.
            if path in index and index[path].mode != pygit2.enums.FileMode.COMMIT:
                index.remove(path)
            continue
        if path.startswith(".venv/") and path not in index:
            continue  # the setup step's virtualenv (openbot.run.setup)
        driver = repo.get_attr(path, "filter") if stat.S_ISREG(mode) and filters else None
        if driver in budget.refused:
            budget.left_out[path] = f"filter {driver} would run a file of the checkout outside the sandbox"
            continue
        if not budget.takes(path, path in index, st.st_size if stat.S_ISREG(mode) else 0):
            continue
        if isinstance(driver, str):
            _add_filtered(repo, index, workdir, path, mode, filters, driver)
        elif stat.S_ISREG(mode) or stat.S_ISLNK(mode):  # a FIFO would block the read forever
            index.add(path)


class _Budget:
    """What the WIP commit takes, file by file, within its limits; what it leaves out, and why."""

    def __init__(self, limits: WipLimits, left_out: dict[str, str], refused: frozenset[str]) -> None:
        self.limits, self.left_out, self.total = limits, left_out, 0
        self.refused = refused  # filter drivers that would run a file of the checkout (repodrivers.py)

    def takes(self, path: str, tracked: bool, size: int) -> bool:
        junk = "" if tracked else _junk(path)
        if junk:
            self.left_out.setdefault(junk, "build output")
        elif size > self.limits.file_bytes:
            self.left_out[path] = f"{_mb(size)}, over the {_mb(self.limits.file_bytes)} a file limit"
        elif self.total + size > self.limits.total_bytes:
            self.left_out[path] = f"{_mb(size)}, past the {_mb(self.limits.total_bytes)} limit in all"
        else:
            self.total += size
            return True
        return False


def _junk(path: str) -> str:
    """The build-output directory (or byte-code file) `path` is in, "" when it is none."""
    parts = path.split("/")
    for i, part in enumerate(parts[:-1]):
        if part in JUNK_DIRS or part.endswith(".egg-info"):
            return "/".join(parts[: i + 1]) + "/"
    return path if path.endswith((".pyc", ".pyo")) else ""


def _mb(size: int) -> str:
    return f"{size / (1 << 20):.1f} MB" if size < 1 << 30 else f"{size / (1 << 30):.1f} GB"


def _changed(index: pygit2.Index, workdir: Path) -> list[str]:
    """What `git status` lists against the index (untracked files included, ignored ones not), except
    inside submodules."""
    import pygit2

    flags = pygit2.enums.DiffOption
    diff = index.diff_to_workdir(
        flags.INCLUDE_UNTRACKED
        | flags.RECURSE_UNTRACKED_DIRS
        | flags.IGNORE_SUBMODULES
        | flags.INCLUDE_TYPECHANGE
    )
    return [delta.new_file.path or delta.old_file.path for delta in diff.deltas]


def _refused(filters: dict[str, str], checkout: Path, tree: pygit2.Tree) -> frozenset[str]:
    """The filter drivers of `filters` whose command names a file of the checkout (or of its commit)."""
    from openbot.git.repodrivers import repo_drivers

    if not filters:
        return frozenset()
    try:
        top = {entry.name for entry in tree if entry.name} | set(os.listdir(checkout))
    except OSError:
        top = {entry.name for entry in tree if entry.name}
    found = repo_drivers(list(filters.items()), top)
    return frozenset(name.partition(".")[2].rpartition(".")[0] for name in found)


def _add_filtered(
    repo: pygit2.Repository,
    index: pygit2.Index,
    workdir: Path,
    path: str,
    mode: int,
    filters: dict[str, str],
    driver: str,
) -> None:
    """Stage `path` through the clean filter its attributes name, run by git itself with the user's
    filter config (libgit2 runs no configured filter: the file would be committed as it is). git-lfs's
    own is done here instead (lfs.clean_into): git-lfs would read the checkout's `.lfsconfig`, the
    agent's, whose `lfs.extension.*` made the commit fail."""
    import pygit2

    file_mode = pygit2.enums.FileMode.BLOB_EXECUTABLE if mode & 0o100 else pygit2.enums.FileMode.BLOB
    if driver == "lfs" and any(k.lower().startswith("filter.lfs.") for k in filters):
        from openbot.git.lfs import clean_into

        pointer = clean_into(Path(filters["lfs.storage"]), workdir / path)
        index.add(pygit2.IndexEntry(path, repo.create_blob(pointer), file_mode))
        return

    options = [arg for name, value in filters.items() for arg in ("-c", f"{name}={value}")]
    # openbot's own git environment (no secrets), bounded: a filter blocked on a file the agent planted
    # is killed with its whole process group.
    env = git_env() | {"GIT_DIR": repo.path, "GIT_WORK_TREE": str(workdir)}
    argv = ["git", *NO_HOOKS, *options, "hash-object", "-w", f"--path={path}", "--", str(workdir / path)]
    proc = run_bounded(argv, cwd=workdir, env=env, timeout=600, what=f"the clean filter of {path}")
    if proc.returncode != 0:
        why = (proc.stderr.decode(errors="replace").strip().splitlines() or ["?"])[0]
        raise OSError(f"the clean filter of {path} failed: {why}")
    index.add(pygit2.IndexEntry(path, pygit2.Oid(hex=proc.stdout.decode().strip()), file_mode))
