"""How objects come from a run's repository (the agent's) into one of the user's, trusting only content.

A carrier is openbot's private git dir: its refs are shas openbot read as plain files (never through a
symlink), its alternates the stores the objects may come from. The user's repository fetches from it
with `transfer.fsckObjects` (every object re-hashed and checked as `git fsck --strict` would), hooks
off, no system config, only the `file` protocol: the run repository's config, refs, hooks and HEAD are
never read by git. Used for the superproject's branch (home.py) and for submodules (submodules.py).
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from openbot.errors import GitError
from openbot.git.gitcmd import first_line, run_git
from openbot.git.specials import clear_store

SHA = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
# Warnings that `git fsck --strict` treats as errors are errors on the way in too.
_STRICT: tuple[str, ...] = ("emptyName", "fullPathname", "hasDot", "hasDotdot", "hasDotgit", "nullSha1")
_STRICT += ("zeroPaddedFilemode", "nulInCommit", "badFilemode")
_FETCH_CONFIG = (
    *("-c", "protocol.allow=never", "-c", "protocol.file.allow=always"),
    *("-c", "transfer.fsckObjects=true", "-c", "fetch.fsckObjects=true", "-c", "gc.auto=0"),
    *[arg for msg in _STRICT for arg in ("-c", f"fetch.fsck.{msg}=error")],
)


def make_carrier(c: Path, head: str, exclude: bytes) -> None:
    """A fresh private git dir at `c` (HEAD detached at `head`, `exclude` as its info/exclude)."""
    for d in ("objects/info", "objects/pack", "refs/heads", "info"):
        (c / d).mkdir(parents=True)
    (c / "HEAD").write_text(f"{head}\n", encoding="utf-8")
    (c / "config").write_text("[core]\n\trepositoryformatversion = 0\n\tbare = false\n", encoding="utf-8")
    (c / "info" / "exclude").write_bytes(exclude)


def borrow(c: Path, stores: list[Path]) -> None:
    (c / "objects" / "info" / "alternates").write_text("".join(f"{p}\n" for p in stores), encoding="utf-8")


def fetch(target: Path, c: Path, shas: list[str], stores: list[Path]) -> list[str]:
    """Import the objects `shas` need from `stores` into the git dir `target`, verified, updating no ref.
    The carrier's HEAD is left at the first sha (the tree a WIP commit starts from). Each store but the
    target's own is a run's: made safe to read first (specials.clear_store); returns what that removed."""
    cleared: list[str] = []
    for store in [s for s in stores if s != target / "objects"]:
        removed = clear_store(store, [s for s in stores if s != store])
        if removed is None:
            stores = [s for s in stores if s != store]  # reached through a link: not read at all
            cleared.append(f"{store} (a symlink)")
        cleared += [f"{store.parent.name}/{store.name}/{r}" for r in removed or []]
    borrow(c, stores)
    (c / "HEAD").write_text(f"{shas[0]}\n", encoding="utf-8")
    specs = []
    for i, sha in enumerate(shas):
        (c / "refs" / "heads" / f"carry{i}").write_text(f"{sha}\n", encoding="utf-8")
        specs.append(f"refs/heads/carry{i}")
    args: tuple[str, ...] = (
        "fetch",
        "--quiet",
        "--no-write-fetch-head",
        "--no-tags",
        "--no-auto-maintenance",
    )
    args += ("--no-recurse-submodules", str(c), *specs)
    gd = f"--git-dir={target}"
    proc = run_git(target, gd, *_FETCH_CONFIG, *args, check=False)
    for spec in specs:
        (c / spec).unlink(missing_ok=True)
    if proc.returncode != 0:
        raise GitError(f"git refused the run's objects: {first_line(proc.stderr)}")
    for sha in shas:
        if not has_commit(target, sha):
            raise GitError(f"the run's commit {sha[:12]} did not arrive")
    return cleared


def has_commit(git_dir: Path, sha: str) -> bool:
    proc = run_git(git_dir, f"--git-dir={git_dir}", "cat-file", "-e", f"{sha}^{{commit}}", check=False)
    return proc.returncode == 0


def read_tip(git_dir: Path, branch: str, below: str = "") -> str | None:
    """The sha of `refs/heads/<branch>` in the git dir `git_dir/below`, read as plain files (no symlink)."""
    pre = f"{below}/" if below else ""
    value = read_plain(git_dir, f"{pre}refs/heads/{branch}")
    if value is not None:
        value = value.strip()
        return value if SHA.match(value) else None
    packed = read_plain(git_dir, f"{pre}packed-refs")
    for line in (packed or "").splitlines():
        sha, _, name = line.partition(" ")
        if name == f"refs/heads/{branch}" and SHA.match(sha):
            return sha
    return None


def read_head(git_dir: Path, below: str = "") -> str | None:
    """The commit the HEAD of `git_dir/below` names (detached, or through a local branch)."""
    head = read_plain(git_dir, f"{below}/HEAD" if below else "HEAD", limit=4096)
    if head is None:
        return None
    head = head.strip()
    if head.startswith("ref: refs/heads/"):
        return read_tip(git_dir, head.removeprefix("ref: refs/heads/"), below)
    return head if SHA.match(head) else None


def read_plain(git_dir: Path, rel: str, limit: int = 64 << 20) -> str | None:
    """A regular file below `git_dir` reached without any symlink; None otherwise."""
    path = git_dir / rel
    if os.path.realpath(path) != os.path.join(os.path.realpath(git_dir), rel):
        return None  # a symlink somewhere on the way
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return f.read(limit).decode("utf-8", "replace")
