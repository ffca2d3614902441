"""What happens to a run's branch once it is home: `review` (leave it), `merge` (fast-forward), `discard`.

Every step works on the commit openbot imported (`Homecoming.tip`), never on what a ref says now, so
no other process can slip its own commit in by moving `openbot/<name>`. A merge is a fast-forward or
nothing: in the user's checkout it is `git merge --ff-only --no-overwrite-ignore` of that sha with hooks
off and only the user's configuration (ffcheckout.py), which refuses (and changes nothing) when a file the
user has and git does not track — ignored ones included — would be overwritten; elsewhere a
compare-and-swap `update-ref`. Only `openbot/…` branches
openbot made are ever deleted, and only while they still hold the imported tip.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pygit2

import shlex
from dataclasses import dataclass
from pathlib import Path

from openbot.errors import GitError, UsageError
from openbot.git.ffcheckout import LACKING_LFS, NEVER_DOWNLOAD, WOULD_OVERWRITE, fast_forward
from openbot.git.gitcmd import first_line, open_repo, run_git
from openbot.git.home import Homecoming
from openbot.git.repo import RepoInfo
from openbot.git.runsdir import RunRepo
from openbot.stops import ACTIONS


@dataclass(frozen=True)
class ActionOutcome:
    action: str
    applied: bool
    message: str  # one human line: what happened, or why nothing did


def apply_action(repo: RepoInfo, rr: RunRepo, action: str, home: Homecoming) -> ActionOutcome:
    """Do what the run's action says with the branch `bring_home` made."""
    import pygit2

    if action not in ACTIONS:
        raise UsageError(f"unknown action {action!r}", hint=f"use one of: {', '.join(ACTIONS)}")
    try:
        return _apply(repo, rr, action, home)
    except (pygit2.GitError, KeyError, ValueError) as e:
        raise GitError(f"{action} of {home.branch} failed: {str(e).splitlines()[0]}") from e


def _apply(repo: RepoInfo, rr: RunRepo, action: str, home: Homecoming) -> ActionOutcome:
    git = open_repo(repo.common_dir)
    tip, branch = home.tip, home.branch
    base_name = rr.base_ref.removeprefix("refs/heads/") if rr.base_ref else rr.base_commit[:12]
    base_ref = git.references.get(rr.base_ref) if rr.base_ref else None
    base_tip = str(base_ref.target) if base_ref is not None else rr.base_commit
    ahead = tip != base_tip and not git.descendant_of(base_tip, tip)
    if action == "discard":
        return _discard(repo, branch, tip, ahead, base_name)
    if not ahead:
        return ActionOutcome(
            action, False, f"{branch} has no new commits over {base_name}; nothing to {action}"
        )
    # Advice a user may follow literally: `--no-overwrite-ignore` keeps git's merge off ignored files too.
    review = (
        f"inspect with `git log -p {base_name}..{branch}`, "
        f"merge with `git merge --no-overwrite-ignore {branch}`"
    )
    if action == "review":
        return ActionOutcome(action, True, f"branch {branch} left for review: {review}")
    return _merge(repo, git, rr, home, base_tip, f"branch {branch} left for review: {review}")


def delete_branch(repo: RepoInfo, branch: str, tip: str) -> bool:
    """Delete openbot's `branch` if it still points at `tip` (compare-and-swap); False if it did not."""
    if not branch.startswith("openbot/"):
        return False
    proc = run_git(
        repo.common_dir,
        f"--git-dir={repo.common_dir}",
        "update-ref",
        "-d",
        f"refs/heads/{branch}",
        tip,
        check=False,
    )
    return proc.returncode == 0


def commits_over(repo: RepoInfo, base: str, tip: str) -> int:
    """How many commits `tip` has that `base` does not."""
    proc = run_git(repo.common_dir, f"--git-dir={repo.common_dir}", "rev-list", "--count", f"{base}..{tip}")
    return int(proc.stdout.strip() or 0)


def _discard(repo: RepoInfo, branch: str, tip: str, ahead: bool, base_name: str) -> ActionOutcome:
    if not delete_branch(repo, branch, tip):
        return ActionOutcome("discard", False, f"kept {branch}: it no longer points at the run's {tip[:12]}")
    news = "" if ahead else f" (it had no new commits over {base_name})"
    return ActionOutcome(
        "discard",
        True,
        f"deleted branch {branch} at {tip[:12]}{news}; restore with `git branch {branch} {tip}`",
    )


def discarded(home: Homecoming, base_commit: str, base_name: str) -> str:
    """What a branch that was never made held: the commits a discard dropped (restorable: their objects
    were brought home) and the uncommitted paths it did not save; or that there was nothing new."""
    if home.tip == base_commit and not home.discarded:
        return f"no new commits over {base_name}: no branch kept ({home.branch} was not made)"
    restore = f"restore with `git branch {home.branch} {home.tip}`"
    said = [f"discarded the run's commits up to {home.tip[:12]}; {restore}"]
    if home.tip == base_commit:
        said = [f"discarded: no new commits over {base_name}"]
    if home.discarded:
        more = f" and {len(home.discarded) - 10} more" if len(home.discarded) > 10 else ""
        said.append(f"uncommitted changes not saved: {', '.join(home.discarded[:10])}{more}")
    return "; ".join(said)


def _merge(
    repo: RepoInfo, git: pygit2.Repository, rr: RunRepo, home: Homecoming, base_tip: str, left: str
) -> ActionOutcome:
    """Fast-forward the base branch to the imported tip, only where nothing of the user's is overwritten."""
    tip, branch = home.tip, home.branch
    if not rr.base_ref:
        return ActionOutcome("merge", False, f"not merged: HEAD was detached when the run started; {left}")
    base = rr.base_ref.removeprefix("refs/heads/")
    if git.references.get(rr.base_ref) is None:
        return ActionOutcome("merge", False, f"not merged: branch {base} no longer exists; {left}")
    if not git.descendant_of(tip, base_tip):
        return ActionOutcome("merge", False, f"not merged: {base} has diverged from {branch}; {left}")
    where = checkouts_of(repo.common_dir, rr.base_ref, main_has_checkout=not git.is_bare)
    done = f"fast-forwarded {base} to {branch} ({tip[:12]})"
    if not where:
        msg = f"openbot: fast-forward {base} to {branch}"
        git_dir = f"--git-dir={repo.common_dir}"
        proc = run_git(
            repo.common_dir, git_dir, "update-ref", "-m", msg, rr.base_ref, tip, base_tip, check=False
        )
        if proc.returncode != 0:
            return ActionOutcome("merge", False, f"not merged: {first_line(proc.stderr)}; {left}")
        return ActionOutcome("merge", True, done)
    if where != [repo.git_dir.resolve()]:
        return ActionOutcome("merge", False, f"not merged: {base} is checked out in another worktree; {left}")
    dirty = run_git(repo.workdir, "status", "--porcelain", "--untracked-files=no").stdout.strip()
    if dirty:
        return ActionOutcome("merge", False, f"not merged: {repo.workdir} has uncommitted changes; {left}")
    why = fast_forward(repo.workdir, repo.common_dir, base_tip, tip)
    if why.startswith(LACKING_LFS):
        return ActionOutcome("merge", False, f"not merged: {why}; {without_download(left, branch)}")
    if why.startswith(WOULD_OVERWRITE):
        return ActionOutcome("merge", False, f"not merged: {why}; {left}; {beside(repo.workdir, branch)}")
    if why:
        return ActionOutcome("merge", False, f"not merged: {why}; {left}")
    return ActionOutcome("merge", True, f"{done} in {repo.workdir}")


def without_download(left: str, branch: str) -> str:
    """The review advice with a merge that cannot reach the server the bot's `.lfsconfig` names: git-lfs
    skips the smudge (the files stay pointers) and has no URL but a path that does not exist."""
    plain = f"merge with `git merge --no-overwrite-ignore {branch}`"
    safe = f"merge without any download (its LFS files stay pointers) with `{NEVER_DOWNLOAD} {branch}`"
    return left.replace(plain, safe)


def beside(workdir: Path, branch: str) -> str:
    """A way to try the branch that cannot overwrite anything: a new checkout in a directory that does not
    exist yet (`git worktree add` refuses one that does)."""
    where = shlex.quote(str(workdir.parent / f"{workdir.name}-{branch.rsplit('/', 1)[-1]}"))
    return f"or try it beside your checkout with `git worktree add {where} {branch}`"


def checkouts_of(common_dir: Path, ref: str, *, main_has_checkout: bool = True) -> list[Path]:
    """Git dirs (main or the user's linked worktrees) whose HEAD is the branch `ref`."""
    admin = common_dir / "worktrees"
    git_dirs = [common_dir] if main_has_checkout else []
    git_dirs += sorted(admin.iterdir()) if admin.is_dir() else []
    found = []
    for git_dir in git_dirs:
        try:
            head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
        except OSError:
            continue
        if head == f"ref: {ref}" and (git_dir == common_dir or _checkout_exists(git_dir)):
            found.append(git_dir.resolve())
    return found


def _checkout_exists(admin_dir: Path) -> bool:
    """A linked worktree whose directory is gone (prunable) no longer holds its branch."""
    try:
        checkout = Path((admin_dir / "gitdir").read_text(encoding="utf-8").strip()).parent
    except OSError:
        return False
    return checkout.exists()
