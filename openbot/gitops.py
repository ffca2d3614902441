"""Git operations on a bot's worktree: carrying changes in, the WIP commit, and the branch's fate.

`commit_wip` snapshots a worktree with pygit2 (so no user hook runs). `apply_action` carries out the
bot's `review` / `merge` / `discard` choice after the worktree is gone, and never touches a checkout
that has changes of its own: a merge is a fast-forward or nothing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openbot.errors import GitError, UsageError

if TYPE_CHECKING:
    from openbot.repo import RepoInfo
    from openbot.worktree import Worktree

ACTIONS = ("review", "merge", "discard")
FALLBACK_NAME, FALLBACK_EMAIL = "openbot", "openbot@localhost"


@dataclass(frozen=True)
class ActionOutcome:
    action: str
    applied: bool
    message: str  # one human line: what happened, or why nothing did


def run_git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run git in `cwd`, ignoring GIT_DIR & co. inherited from a hook; failures become one-line GitErrors."""
    env = {k: v for k, v in os.environ.items() if k not in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE")}
    proc = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise GitError(f"git {args[0]} failed in {cwd}: {first_line(proc.stderr or proc.stdout)}")
    return proc


def first_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    # git prints "Preparing worktree…" before the real error; the last "fatal:"/"error:" line says why.
    for ln in reversed(lines):
        if ln.startswith(("fatal:", "error:")):
            return ln
    return lines[0] if lines else "(no output)"


def signature(repo: Any) -> Any:
    """The repository's configured user, or a recognisable openbot identity when none is configured."""
    import pygit2

    try:
        return repo.default_signature
    except (KeyError, pygit2.GitError):
        return pygit2.Signature(FALLBACK_NAME, FALLBACK_EMAIL)


def commit_wip(wt: Worktree, message: str) -> str | None:
    """Commit everything in the worktree (untracked too, .gitignore respected) on wt.branch; None if clean."""
    import pygit2

    try:
        repo = pygit2.Repository(str(wt.path))
        index = repo.index
        _stage_everything(repo, index, wt.path)
        tree = index.write_tree()
        branch = repo.branches.local.get(wt.branch)
        parent = branch.peel(pygit2.Commit) if branch is not None else repo.head.peel(pygit2.Commit)
        if tree == parent.tree_id:
            return None
        sig = signature(repo)
        oid = repo.create_commit(f"refs/heads/{wt.branch}", sig, sig, message, tree, [parent.id])
        try:
            index.write()  # so the worktree reads as clean
        except pygit2.GitError:
            pass  # an index.lock left by a killed git: the commit is what matters
        return str(oid)
    except (pygit2.GitError, KeyError, ValueError, OSError) as e:
        raise GitError(f"could not commit work in {wt.path}: {str(e).splitlines()[0]}") from e


def _stage_everything(repo: Any, index: Any, workdir: Path) -> None:
    """`git add -A`, except that a repository nested in the worktree (a bot's clone) is left out."""
    for path in repo.status(untracked_files="all", ignored=False):
        if path.endswith("/"):
            continue  # a nested repository; index.add_all() would fail on it
        if (workdir / path).is_symlink() or (workdir / path).exists():
            index.add(path)
        elif path in index:
            index.remove(path)


def apply_action(repo: RepoInfo, wt: Worktree, action: str) -> ActionOutcome:
    """Do what the run's action says with the bot's branch (call after remove_worktree)."""
    import pygit2

    if action not in ACTIONS:
        raise UsageError(f"unknown action {action!r}", hint=f"use one of: {', '.join(ACTIONS)}")
    try:
        return _apply(repo, wt, action)
    except (pygit2.GitError, KeyError, ValueError) as e:
        raise GitError(f"{action} of {wt.branch} failed: {str(e).splitlines()[0]}") from e


def _apply(repo: RepoInfo, wt: Worktree, action: str) -> ActionOutcome:
    git = _pygit2_repo(repo.common_dir)
    branch = git.branches.local.get(wt.branch)
    if branch is None:
        return ActionOutcome(action, False, f"branch {wt.branch} no longer exists; nothing to {action}")
    tip = str(branch.target)
    base_name = wt.base_ref.removeprefix("refs/heads/") if wt.base_ref else wt.base_commit[:12]
    base_ref = git.references.get(wt.base_ref) if wt.base_ref else None
    base_tip = str(base_ref.target) if base_ref is not None else wt.base_commit
    ahead = tip != base_tip and not git.descendant_of(base_tip, tip)
    review = f"inspect with `git log -p {base_name}..{wt.branch}`, merge with `git merge {wt.branch}`"
    if action == "discard":
        return _discard(git, wt.branch, tip, ahead, base_name)
    if not ahead:
        return ActionOutcome(
            action, False, f"{wt.branch} has no new commits over {base_name}; nothing to {action}"
        )
    if action == "review":
        return ActionOutcome(action, True, f"branch {wt.branch} left for review: {review}")
    return _merge(repo, git, wt, tip, base_tip, review)


def _pygit2_repo(path: Path) -> Any:
    import pygit2

    return pygit2.Repository(str(path))


def _discard(git: Any, branch: str, tip: str, ahead: bool, base_name: str) -> ActionOutcome:
    import pygit2

    try:
        git.branches.local.delete(branch)
    except pygit2.GitError as e:
        return ActionOutcome("discard", False, f"could not delete {branch}: {str(e).splitlines()[0]}")
    news = "" if ahead else f" (it had no new commits over {base_name})"
    return ActionOutcome(
        "discard",
        True,
        f"deleted branch {branch} at {tip[:12]}{news}; restore with `git branch {branch} {tip}`",
    )


def _merge(repo: RepoInfo, git: Any, wt: Worktree, tip: str, base_tip: str, review: str) -> ActionOutcome:
    """Fast-forward the base branch, only where nothing of the user's can be overwritten."""
    left = f"branch {wt.branch} left for review: {review}"
    if not wt.base_ref:
        return ActionOutcome("merge", False, f"not merged: HEAD was detached when the run started; {left}")
    base = wt.base_ref.removeprefix("refs/heads/")
    if git.references.get(wt.base_ref) is None:
        return ActionOutcome("merge", False, f"not merged: branch {base} no longer exists; {left}")
    if not git.descendant_of(tip, base_tip):
        return ActionOutcome("merge", False, f"not merged: {base} has diverged from {wt.branch}; {left}")
    where = checkouts_of(repo.common_dir, wt.base_ref, main_has_checkout=not git.is_bare)
    if not where:
        # compare-and-swap: if the user moves the branch meanwhile, update-ref refuses
        msg = f"openbot: fast-forward {base} to {wt.branch}"
        proc = run_git(repo.common_dir, "update-ref", "-m", msg, wt.base_ref, tip, base_tip, check=False)
        if proc.returncode != 0:
            return ActionOutcome("merge", False, f"not merged: {first_line(proc.stderr)}; {left}")
        return ActionOutcome("merge", True, f"fast-forwarded {base} to {wt.branch} ({tip[:12]})")
    if where != [repo.git_dir.resolve()]:
        return ActionOutcome("merge", False, f"not merged: {base} is checked out in another worktree; {left}")
    dirty = run_git(repo.workdir, "status", "--porcelain", "--untracked-files=no").stdout.strip()
    if dirty:
        return ActionOutcome("merge", False, f"not merged: {repo.workdir} has uncommitted changes; {left}")
    # git itself refuses when an untracked file would be overwritten, and then changes nothing
    proc = run_git(repo.workdir, "merge", "--ff-only", "--quiet", wt.branch, check=False)
    if proc.returncode != 0:
        return ActionOutcome("merge", False, f"not merged: {first_line(proc.stderr)}; {left}")
    return ActionOutcome(
        "merge", True, f"fast-forwarded {base} in {repo.workdir} to {wt.branch} ({tip[:12]})"
    )


def checkouts_of(common_dir: Path, ref: str, *, main_has_checkout: bool = True) -> list[Path]:
    """Git dirs (main or linked worktree) whose HEAD is the branch `ref`."""
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
        return Path((admin_dir / "gitdir").read_text(encoding="utf-8").strip()).exists()
    except OSError:
        return False


def carry_changes(user: Any, workdir: Path, target: Path) -> None:
    """Copy the user's uncommitted state (edits, deletions, untracked non-ignored files) into `target`."""
    for rel in user.status(untracked_files="all", ignored=False):
        src, dst = workdir / rel, target / rel
        if src.is_symlink() or src.is_file():
            dst.parent.mkdir(parents=True, exist_ok=True)
            if dst.is_dir() and not dst.is_symlink():
                shutil.rmtree(dst)
            elif dst.is_symlink() or dst.exists():
                dst.unlink()
            shutil.copy2(src, dst, follow_symlinks=False)
        elif not src.exists():
            dst.unlink(missing_ok=True)  # deleted in the user's checkout
