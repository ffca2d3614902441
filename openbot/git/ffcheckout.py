"""openbot's fast-forward of the user's checkout: only the user's configuration, nothing left behind.

The bot's commits may carry `.lfsconfig`, `.gitattributes` and `.gitmodules`; a checkout reads them as it
writes them. So the merge (hooks off, gitcmd.py):
- never downloads: an LFS pointer new in the bot's commits whose object is not in the user's store refuses
  the merge before anything is written (git-lfs would fetch it from the `lfs.url` the bot's `.lfsconfig`
  names: a `network = false` bot could send anything there, encoded in the oid), and git-lfs runs with
  `lfs.url` set on the command line, which beats `.lfsconfig` and every remote's `lfsurl`;
- runs no filter or merge driver of the user's whose command names a file in the repository
  (`filter.strip.smudge = ./tools/strip.sh`): the bot's commits could change that file, and the merge runs
  beside the sandbox; such a merge is refused (repodrivers.py);
- updates no submodule (`submodule.recurse=false`: the bot's `.gitmodules` names no place to go);
- when git fails part-way (a filter that fails, a disk that fills), puts back what it wrote: each file the
  bot's commits change is restored from HEAD, and each one they add that was not there before is removed.
"""

from __future__ import annotations

import os
from pathlib import Path

from openbot.git import lfs, repodrivers, userrepo
from openbot.git.gitcmd import first_line, git_bytes, run_git

WOULD_OVERWRITE = "the fast-forward would overwrite"
LACKING_LFS = "the bot's commits point to LFS object"
# The merge a user may run after LACKING_LFS: git-lfs honours GIT_LFS_SKIP_SMUDGE (no object is fetched,
# the pointer is written) and a command-line `lfs.url` beats the bot's `.lfsconfig`
# (tests/run/test_repo_drivers.py runs it against a listening server).
NEVER_DOWNLOAD = f"GIT_LFS_SKIP_SMUDGE=1 git -c {lfs.NO_DOWNLOAD[1]} merge --no-overwrite-ignore"
MERGE = ("merge", "--ff-only", "--no-overwrite-ignore", "--no-autostash", "--quiet", "--no-stat")


def fast_forward(workdir: Path, common_dir: Path, head: str, tip: str) -> str:
    """Fast-forward the checkout at `workdir` from `head` to `tip`: "" when done, else why not (and the
    checkout as it was)."""
    lacking = lacking_lfs_objects(common_dir, head, tip)
    if lacking:
        more = f" and {len(lacking) - 1} more" if len(lacking) > 1 else ""
        return (
            f"{LACKING_LFS} {lacking[0][:12]}{more}, which your LFS store lacks "
            "(openbot never downloads: the bot's .lfsconfig could name any server)"
        )
    drivers = repodrivers.repo_drivers(userrepo.config(workdir), repodrivers.top_names(common_dir, tip))
    if drivers:
        return repodrivers.said(drivers)
    changed = _changed(common_dir, head, tip)
    absent = [p for p in changed if not os.path.lexists(workdir / p)]
    made = {d for p in absent for d in Path(p).parents if d != Path(".") and not os.path.lexists(workdir / d)}
    options = ("-c", "submodule.recurse=false", *_no_download(common_dir))
    proc = run_git(workdir, *options, *MERGE, tip, check=False)
    if proc.returncode == 0:
        return ""
    _put_back(workdir, common_dir, head, changed, absent, made)
    return why_not(proc.stderr, workdir)


def lacking_lfs_objects(common_dir: Path, head: str, tip: str) -> list[str]:
    """oids of the LFS pointers `tip` brings over `head` that the user's LFS store lacks (where the user's
    git runs git-lfs at all: otherwise a pointer is checked out as the text it is)."""
    if not lfs.installed() or not lfs.configured(common_dir):
        return []
    store = lfs.storage(common_dir)
    return sorted(
        oid for oid in lfs.pointers(common_dir, head, tip) if not lfs.object_path(store, oid).is_file()
    )


def _no_download(common_dir: Path) -> tuple[str, ...]:
    return lfs.NO_DOWNLOAD if lfs.installed() and lfs.configured(common_dir) else ()


def _changed(common_dir: Path, head: str, tip: str) -> list[str]:
    """The paths whose content differs between `head` and `tip`."""
    out = git_bytes(common_dir, "diff-tree", "-r", "-z", "--no-renames", "--name-only", head, tip)
    return [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]


def _put_back(
    workdir: Path, common_dir: Path, head: str, changed: list[str], absent: list[str], made: set[Path]
) -> None:
    """Undo a fast-forward git gave up part-way: HEAD has not moved, so the files it names come back from
    HEAD, and those the merge created (absent before, not in HEAD) go."""
    now = run_git(workdir, "rev-parse", "HEAD", check=False).stdout.strip()
    if now != head:
        return  # HEAD moved after all: the checkout is git's now, not half-written
    in_head = set(_listed(common_dir, head, changed))
    for path in absent:
        if path not in in_head and os.path.lexists(workdir / path):
            _remove_created(workdir, Path(path), made)
    restore = [p for p in changed if p in in_head]
    if restore:
        spec = "".join(f"{p}\0" for p in restore).encode("utf-8", "surrogateescape")
        args = ("restore", "--source=HEAD", "--staged", "--worktree", "--pathspec-from-file=-")
        git_bytes(common_dir, "--literal-pathspecs", *args, "--pathspec-file-nul", stdin=spec, cwd=workdir)


def _listed(common_dir: Path, commit: str, paths: list[str]) -> list[str]:
    """Which of `paths` `commit` has."""
    out = git_bytes(common_dir, "ls-tree", "-r", "-z", "--name-only", "--full-tree", commit)
    have = set(out.decode("utf-8", "surrogateescape").split("\0"))
    return [p for p in paths if p in have]


def _remove_created(workdir: Path, rel: Path, made: set[Path]) -> None:
    """Remove a file the failed merge made, and the directories it made for it that are now empty."""
    target = workdir / rel
    if target.is_dir() and not target.is_symlink():
        return  # a submodule's directory: not a file git wrote
    target.unlink()
    for parent in rel.parents:
        if parent not in made:
            break
        try:
            (workdir / parent).rmdir()  # only one the merge made, and only once empty
        except OSError:
            break


def why_not(stderr: str, workdir: Path) -> str:
    """git's refusal in one line: the files it would have overwritten, named."""
    files = [ln.strip() for ln in stderr.splitlines() if ln.startswith("\t")]
    if "would be overwritten" in stderr and files:
        shown = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
        return f"{WOULD_OVERWRITE} {shown} in {workdir}, which git does not track"
    return first_line(stderr)
