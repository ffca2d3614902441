"""Bringing a run's branch home: from the run's repository into the user's, verified, as `openbot/<name>`.

Runs outside the sandbox, so it trusts nothing in the run's repository but object *content*, which
git checks on receipt:
1. openbot reads the run branch's tip (a sha; never through a symlink) and makes a private git dir, the
   carrier, whose only ref is that sha and whose alternates are the run's objects and the user's. The
   user's repository fetches from the carrier with `transfer.fsckObjects` (index-pack re-hashes every
   object and checks it as `git fsck --strict` would), hooks off, no system config, only the `file`
   protocol: the run repository's config, refs, hooks and HEAD are never read by git.
   (carrier.py). The LFS objects its new commits point to are copied into the user's LFS store, each
   re-hashed (lfs.py); the bot's work in submodules goes to the user's module repositories (subhome.py).
2. What the agent left uncommitted becomes a WIP commit on top (wip.py), made in the carrier, which now
   borrows only the user's objects, and is fetched the same way.
3. The user's `refs/heads/openbot/<name>` is set with a compare-and-swap against the value openbot
   recorded when the run started (new runs: it must not exist) — `git update-ref`, hooks off.
The returned tip is the one commit `merge` may ever fast-forward to.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path

from openbot.errors import GitError
from openbot.git import lfs
from openbot.git.carrier import borrow, fetch, make_carrier, read_tip
from openbot.git.carryover import SETUP_EXCLUDES, wip_filters
from openbot.git.gitcmd import first_line, open_repo, rmtree, run_git, signature
from openbot.git.runsdir import RunRepo, record_home_tip
from openbot.git.subhome import bring_modules_home
from openbot.git.wip import DEFAULT_LIMITS, WipLimits, commit_wip, uncommitted


@dataclass(frozen=True)
class Homecoming:
    branch: str  # the user's branch holding the run's work ("openbot/<name>", or a fallback name)
    tip: str  # the commit openbot put there: the only one `merge` may fast-forward to
    wip: str | None  # the WIP commit made of the uncommitted work, if any
    note: str = ""  # one line on what could not be brought home, "" when everything was
    left_out: tuple[str, ...] = ()  # "path (why)" of the uncommitted files the WIP commit did not take
    made: bool = True  # False: the branch would have held nothing new, and was not made (see bring_home)
    discarded: tuple[str, ...] = ()  # a discard's uncommitted paths, not saved (bring_home's `discard`)


def bring_home(
    rr: RunRepo,
    wip_message: str,
    limits: WipLimits = DEFAULT_LIMITS,
    empty_branch: bool = True,
    discard: bool = False,
) -> Homecoming:
    """Import the run's branch and its uncommitted work into the user's repository (see module doc).
    `empty_branch=False`: a branch that never existed and would hold nothing new (no commit over the base,
    nothing uncommitted) is not made (`made` False): a run's end would only delete it again.
    `discard` (the agent's action, a run without submodules): the commits are imported (a discard says how
    to restore them) but no branch is made and no WIP commit; `discarded` lists what was uncommitted."""
    start = rr.home_tip or rr.base_commit
    notes: list[str] = []
    left_out: dict[str, str] = {}
    rmtree(rr.carrier)
    try:
        make_carrier(rr.carrier, rr.base_commit, _exclude(rr.common_dir))
        tip = read_tip(rr.git_dir, rr.branch) or start
        if tip != start:
            try:
                cleared = fetch(
                    rr.common_dir, rr.carrier, [tip], [rr.git_dir / "objects", rr.common_dir / "objects"]
                )
                notes.append(
                    f"removed from the run's repository what git must not open: {', '.join(cleared)}"
                    if cleared
                    else ""
                )
            except GitError as e:
                notes.append(f"the run's commits could not be imported ({e.one_line()}); its files are kept")
                tip = start
            else:
                notes.append(_import_lfs(rr, start, tip))
        if discard and not rr.modules and not rr.home_tip:
            return _discarded(rr, tip, notes)
        gitlinks, module_notes = bring_modules_home(rr, start, tip, wip_message)
        notes += module_notes
        wip = _wip(rr, tip, wip_message, gitlinks, limits, left_out) if rr.path.is_dir() else None
        made = empty_branch or bool(wip or rr.home_tip) or tip != rr.base_commit
        branch = _set_branch(rr, wip or tip) if made else rr.branch
        if made and branch == rr.branch:
            rr.home_tip = wip or tip
            record_home_tip(rr)
    except BaseException:
        rmtree(rr.carrier)
        raise
    # Home: the carrier goes with the run's directories (runsdir.detach), which every caller removes next.
    said = tuple(f"{path} ({why})" for path, why in left_out.items())
    return Homecoming(branch, wip or tip, wip, "; ".join(n for n in notes if n), said, made)


def _discarded(rr: RunRepo, tip: str, notes: list[str]) -> Homecoming:
    """A discard's homecoming: the commits imported, what was left uncommitted named, nothing saved."""
    borrow(rr.carrier, [rr.common_dir / "objects"])
    dropped = uncommitted(rr.carrier, rr.path, tip, rr.git_dir / "index") if rr.path.is_dir() else []
    return Homecoming(
        rr.branch, tip, None, "; ".join(n for n in notes if n), made=False, discarded=tuple(dropped)
    )


def _wip(
    rr: RunRepo, tip: str, message: str, gitlinks: dict[str, str], limits: WipLimits, left_out: dict[str, str]
) -> str | None:
    """The WIP commit of what the agent left uncommitted, made in the carrier and fetched home."""
    sig = signature(open_repo(rr.common_dir))
    borrow(rr.carrier, [rr.common_dir / "objects"])  # libgit2 reads only objects git has verified
    stat_cache = rr.git_dir / "index"
    filters = lambda: wip_filters(rr.common_dir)  # noqa: E731 - read only when something changed
    wip = commit_wip(rr.carrier, rr.path, tip, message, sig, stat_cache, filters, gitlinks, limits, left_out)
    if wip is not None:
        fetch(rr.common_dir, rr.carrier, [wip], [rr.common_dir / "objects"])
    return wip


def _exclude(git_dir: Path) -> bytes:
    """The user's private ignores, as in their checkout, and what the setup step makes."""
    exclude = git_dir / "info" / "exclude"
    mine = exclude.read_bytes() if exclude.is_file() and not exclude.is_symlink() else b""
    return mine + b"\n" + SETUP_EXCLUDES.encode()


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
