"""Bringing a run's branch home: from the run's repository into the user's, verified, as `openbot/<name>`.

Runs outside the sandbox, so it trusts nothing in the run's repository but object *content*, which
git checks on receipt:
1. openbot reads the run branch's tip (a sha; never through a symlink) and makes a private git dir, the
   carrier, whose only ref is that sha and whose alternates are the run's objects and the user's. The
   user's repository fetches from the carrier with `transfer.fsckObjects` (index-pack re-hashes every
   object and checks it as `git fsck --strict` would), hooks off, no system config, only the `file`
   protocol: the run repository's config, refs, hooks and HEAD are never read by git.
2. What the agent left uncommitted becomes a WIP commit on top (wip.py), made in the carrier, which now
   borrows only the user's objects, and is fetched the same way.
3. The user's `refs/heads/openbot/<name>` is set with a compare-and-swap against the value openbot
   recorded when the run started (new runs: it must not exist) — `git update-ref`, hooks off.
The returned tip is the one commit `merge` may ever fast-forward to.
"""

from __future__ import annotations

import os
import re
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from openbot.errors import GitError
from openbot.git import lfs
from openbot.git.carryover import carried_config
from openbot.git.gitcmd import first_line, open_repo, rmtree, run_git, signature
from openbot.git.runrepo import SETUP_EXCLUDES
from openbot.git.runsdir import RunRepo, record_home_tip
from openbot.git.wip import commit_wip

_SHA = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
IMPORT_TIMEOUT = 900.0  # seconds; an agent can make git's reads block (a FIFO), never forever
# Warnings that `git fsck --strict` treats as errors are errors on the way in too.
_STRICT: tuple[str, ...] = ("emptyName", "fullPathname", "hasDot", "hasDotdot", "hasDotgit", "nullSha1")
_STRICT += ("zeroPaddedFilemode", "nulInCommit", "badFilemode")
_FETCH_CONFIG = (
    *("-c", "protocol.allow=never", "-c", "protocol.file.allow=always"),
    *("-c", "transfer.fsckObjects=true", "-c", "fetch.fsckObjects=true", "-c", "gc.auto=0"),
    *[arg for msg in _STRICT for arg in ("-c", f"fetch.fsck.{msg}=error")],
)


@dataclass(frozen=True)
class Homecoming:
    branch: str  # the user's branch holding the run's work ("openbot/<name>", or a fallback name)
    tip: str  # the commit openbot put there: the only one `merge` may fast-forward to
    wip: str | None  # the WIP commit made of the uncommitted work, if any
    note: str = ""  # one line on what could not be brought home, "" when everything was


def bring_home(rr: RunRepo, wip_message: str) -> Homecoming:
    """Import the run's branch and its uncommitted work into the user's repository (see module doc)."""
    start = rr.home_tip or rr.base_commit
    note = ""
    rmtree(rr.carrier)
    try:
        _make_carrier(rr)
        tip = read_tip(rr.git_dir, rr.branch) or start
        if tip != start:
            try:
                _fetch(rr, tip, borrow_run_objects=True)
            except GitError as e:
                note = f"the run's commits could not be imported ({e.one_line()}); its files are kept"
                tip = start
            else:
                note = _import_lfs(rr, start, tip)
        wip = None
        if rr.path.is_dir():
            sig = signature(open_repo(rr.common_dir))
            _borrow(rr, run_objects=False)  # libgit2 reads only objects git has verified
            filters = {
                k: v
                for k, v in carried_config(open_repo(rr.common_dir).config).items()
                if k.lower().startswith("filter.")
            }
            filters["lfs.storage"] = str(rr.common_dir / "lfs")  # LFS objects kept in the user's store
            wip = commit_wip(rr.carrier, rr.path, tip, wip_message, sig, rr.git_dir / "index", filters)
            if wip is not None:
                _fetch(rr, wip, borrow_run_objects=False)
        branch = _set_branch(rr, wip or tip)
        if branch == rr.branch:
            rr.home_tip = wip or tip
            record_home_tip(rr)
    finally:
        rmtree(rr.carrier)
    return Homecoming(branch, wip or tip, wip, note)


def _import_lfs(rr: RunRepo, start: str, tip: str) -> str:
    """The LFS objects the bot's commits point to, from the run's store into the user's (lfs.py)."""
    store = rr.git_dir / "lfs"
    if store.is_symlink() or not (store / "objects").is_dir() or not lfs.installed():
        return ""
    try:
        lost = lfs.import_objects(rr.common_dir, store, lfs.pointers(rr.common_dir, start, tip))
    except (GitError, OSError) as e:
        return f"the LFS objects of the bot's commits could not be saved: {e}"
    if not lost:
        return ""
    return f"{len(lost)} LFS object(s) the bot's commits point to were not in its store (e.g. {lost[0][:12]})"


def read_tip(git_dir: Path, branch: str) -> str | None:
    """The sha of `refs/heads/<branch>` in the run's repository, read as plain files, never followed."""
    value = _read_plain(git_dir, f"refs/heads/{branch}")
    if value is not None:
        value = value.strip()
        return value if _SHA.match(value) else None
    packed = _read_plain(git_dir, "packed-refs")
    for line in (packed or "").splitlines():
        sha, _, name = line.partition(" ")
        if name == f"refs/heads/{branch}" and _SHA.match(sha):
            return sha
    return None


def _read_plain(git_dir: Path, rel: str, limit: int = 64 << 20) -> str | None:
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


def _make_carrier(rr: RunRepo) -> None:
    c = rr.carrier
    for d in ("objects/info", "objects/pack", "refs/heads", "info"):
        (c / d).mkdir(parents=True)
    (c / "HEAD").write_text(f"{rr.base_commit}\n", encoding="utf-8")
    (c / "config").write_text("[core]\n\trepositoryformatversion = 0\n\tbare = false\n", encoding="utf-8")
    exclude = rr.common_dir / "info" / "exclude"  # the user's private ignores, as in their checkout
    mine = exclude.read_bytes() if exclude.is_file() and not exclude.is_symlink() else b""
    (c / "info" / "exclude").write_bytes(mine + b"\n" + SETUP_EXCLUDES.encode())  # and the setup's .venv


def _borrow(rr: RunRepo, *, run_objects: bool) -> None:
    stores = [rr.git_dir / "objects"] if run_objects else []
    (rr.carrier / "objects" / "info" / "alternates").write_text(
        "".join(f"{p}\n" for p in [*stores, rr.common_dir / "objects"]), encoding="utf-8"
    )


def _fetch(rr: RunRepo, sha: str, *, borrow_run_objects: bool) -> None:
    """Import the objects `sha` needs into the user's repository, verified, updating no ref."""
    c = rr.carrier
    _borrow(rr, run_objects=borrow_run_objects)
    (c / "HEAD").write_text(f"{sha}\n", encoding="utf-8")  # the tree the WIP commit starts from
    (c / "refs" / "heads" / "carry").write_text(f"{sha}\n", encoding="utf-8")
    args: tuple[str, ...] = (
        "fetch",
        "--quiet",
        "--no-write-fetch-head",
        "--no-tags",
        "--no-auto-maintenance",
    )
    args += ("--no-recurse-submodules", str(c), "refs/heads/carry")
    proc = run_git(
        rr.common_dir,
        f"--git-dir={rr.common_dir}",
        *_FETCH_CONFIG,
        *args,
        check=False,
        timeout=IMPORT_TIMEOUT,
    )
    if proc.returncode != 0:
        raise GitError(f"git refused the run's objects: {first_line(proc.stderr)}")
    has = run_git(
        rr.common_dir, f"--git-dir={rr.common_dir}", "cat-file", "-e", f"{sha}^{{commit}}", check=False
    )
    if has.returncode != 0:
        raise GitError(f"the run's commit {sha[:12]} did not arrive")


def _set_branch(rr: RunRepo, tip: str) -> str:
    """Point the user's `openbot/<name>` at `tip` if it still holds what openbot recorded; else a new name."""
    if tip == rr.home_tip:
        return rr.branch
    for branch in (rr.branch, f"{rr.branch}-{secrets.token_hex(3)}"):
        ref = f"refs/heads/{branch}"
        _unlink_symlinked_reflog(rr.common_dir, ref)
        old = rr.home_tip if branch == rr.branch and rr.home_tip else ""  # "": must not exist
        msg = f"openbot: the work of run {rr.name}"
        proc = run_git(
            rr.common_dir, f"--git-dir={rr.common_dir}", "update-ref", "-m", msg, ref, tip, old, check=False
        )
        if proc.returncode == 0:
            return branch
    raise GitError(f"could not set branch {rr.branch} to {tip[:12]}: {first_line(proc.stderr)}")


def _unlink_symlinked_reflog(common_dir: Path, ref: str) -> None:
    """git appends to a reflog through a symlink; one in openbot's own namespace is removed first."""
    ours = common_dir / "logs" / "refs" / "heads" / "openbot"
    log = common_dir / "logs" / ref
    for p in [log, *log.parents]:
        if not p.is_relative_to(ours):
            return
        if p.is_symlink():
            p.unlink()
            return
