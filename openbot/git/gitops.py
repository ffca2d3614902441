"""Git operations on a bot's worktree: carrying changes in, the WIP commit, and the branch's fate.

`commit_wip` snapshots a worktree with pygit2 (so no user hook runs), opening the repository from
openbot's own record of the worktree: the bot can rewrite everything inside its worktree (the `.git`
file too) and its admin dir, so nothing there may decide which repository, checkout or branch a commit
goes to. `apply_action` carries out the
bot's `review` / `merge` / `discard` choice after the worktree is gone, and never touches a checkout
that has changes of its own: a merge is a fast-forward or nothing.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openbot.envpolicy import NEVER, is_secret_name
from openbot.errors import GitError, UsageError
from openbot.files import write_atomic

if TYPE_CHECKING:
    from openbot.git.repo import RepoInfo
    from openbot.git.worktree import Worktree

ACTIONS = ("review", "merge", "discard")
FALLBACK_NAME, FALLBACK_EMAIL = "openbot", "openbot@localhost"
_REPO_ENV = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY")


@dataclass(frozen=True)
class ActionOutcome:
    action: str
    applied: bool
    message: str  # one human line: what happened, or why nothing did


def run_git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run git in `cwd`, ignoring GIT_DIR & co. inherited from a hook; failures become one-line GitErrors.

    git runs in its own session: a Ctrl-C at the terminal reaches openbot alone, which decides when to
    stop, instead of killing a `git merge` half-way through updating the user's files.
    """
    # No secrets either: the user's hooks (post-merge on a fast-forward) run with this environment.
    env = {
        k: v for k, v in os.environ.items() if k not in _REPO_ENV and k not in NEVER and not is_secret_name(k)
    }
    proc = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, start_new_session=True
    )
    if check and proc.returncode != 0:
        sub = next((a for a in args if not a.startswith("-") and "=" not in a), "")  # past `-c k=v`
        raise GitError(f"git {sub} failed in {cwd}: {first_line(proc.stderr or proc.stdout)}")
    return proc


def first_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    # git prints "Preparing worktree…" before the real error; the last "fatal:"/"error:" line says why.
    for ln in reversed(lines):
        if ln.startswith(("fatal:", "error:")):
            return ln
    return lines[0] if lines else "(no output)"


def open_repo(path: Path) -> Any:
    import pygit2

    try:
        return pygit2.Repository(str(path))
    except pygit2.GitError as e:
        raise GitError(f"cannot open git repository at {path}: {str(e).splitlines()[0]}") from e


def signature(repo: Any) -> Any:
    """The repository's configured user, or a recognisable openbot identity when none is configured."""
    import pygit2

    try:
        return repo.default_signature
    except (KeyError, pygit2.GitError):
        return pygit2.Signature(FALLBACK_NAME, FALLBACK_EMAIL)


def commit_wip(wt: Worktree, message: str) -> str | None:
    """Commit everything in the worktree (untracked too, .gitignore respected) on wt.branch; None if clean.

    The commit's parent is the branch tip whatever HEAD says. GitError when it cannot be made safely.
    """
    import pygit2

    try:
        repo = _open_worktree(wt)
        ref = repo.references.get(f"refs/heads/{wt.branch}")
        if ref is None and not wt.base_commit:
            raise GitError(f"could not commit work in {wt.path}: branch {wt.branch} no longer exists")
        parent = repo[ref.target if ref is not None else wt.base_commit].peel(pygit2.Commit)
        index = repo.index
        index.read_tree(parent.tree)  # the bot's index may hide changes; read_tree keeps its stat cache
        _stage_everything(repo, index, wt.path)
        tree = index.write_tree()
        if tree == parent.tree_id:
            return None
        sig = signature(repo)
        oid = repo.create_commit(f"refs/heads/{wt.branch}", sig, sig, message, tree, [parent.id])
        if not (wt.admin_dir / "index").is_symlink():
            try:
                index.write()  # so the worktree reads as clean
            except pygit2.GitError:
                pass  # an index.lock left by a killed git: the commit is what matters
        return str(oid)
    except (pygit2.GitError, KeyError, ValueError, OSError) as e:
        why = (str(e).splitlines() or [type(e).__name__])[0]
        raise GitError(f"could not commit work in {wt.path}: {why}") from e


def _open_worktree(wt: Worktree) -> Any:
    """The worktree's repository, from wt's paths alone: the admin files are reset to what they must be."""
    import pygit2

    admin, dotgit = wt.admin_dir, wt.path / ".git"
    if not wt.path.is_dir():
        raise GitError(f"could not commit work in {wt.path}: the directory is gone")
    if admin.parent.resolve() != (wt.common_dir / "worktrees").resolve() or admin.is_symlink():
        raise GitError(f"could not commit work in {wt.path}: its git metadata is not where openbot put it")
    admin.mkdir(parents=True, exist_ok=True)
    admin.chmod(admin.stat().st_mode | stat.S_IRWXU)  # the bot may have made it read-only
    _put(admin / "commondir", "../..\n")
    _put(admin / "gitdir", f"{wt.path / '.git'}\n")
    _put(admin / "HEAD", f"ref: refs/heads/{wt.branch}\n")
    if dotgit.is_symlink() or not dotgit.is_dir():  # a kept worktree must not lead git elsewhere
        with contextlib.suppress(OSError):  # e.g. a read-only worktree: not worth losing the commit over
            _put(dotgit, f"gitdir: {admin}\n")
    index = admin / "index"
    if index.is_symlink() or (index.exists() and not index.is_file()):
        index.unlink()  # libgit2 would write through a symlink, e.g. into the user's index
    repo = pygit2.Repository(str(admin), pygit2.enums.RepositoryOpenFlag.NO_SEARCH)
    repo.workdir = str(wt.path)
    try:
        repo.index  # noqa: B018 - reads it
    except pygit2.GitError:
        index.unlink()  # unreadable: start from the branch tip, only the stat cache is lost
        repo = pygit2.Repository(str(admin), pygit2.enums.RepositoryOpenFlag.NO_SEARCH)
        repo.workdir = str(wt.path)
    if Path(repo.path).resolve() != admin.resolve():
        raise GitError(f"could not commit work in {wt.path}: git opened {repo.path}, not {admin}")
    return repo


def _put(path: Path, text: str) -> None:
    """Make `path` a regular file holding `text`, replacing (never writing through) whatever is there."""
    try:
        if not path.is_symlink() and path.read_text(encoding="utf-8") == text:
            return
    except (OSError, UnicodeDecodeError):
        pass
    write_atomic(path, text)  # a rename replaces a symlink; writing through it never happens


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
    git = open_repo(repo.common_dir)
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
    checkout = checkout_path(admin_dir)
    return checkout is not None and checkout.exists()


def checkout_path(admin_dir: Path) -> Path | None:
    """The checkout directory an admin dir belongs to (its `gitdir` file names `<checkout>/.git`)."""
    try:
        return Path((admin_dir / "gitdir").read_text(encoding="utf-8").strip()).parent
    except OSError:
        return None


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


def rmtree(path: Path | None) -> None:
    """Delete a tree even where a bot left read-only directories."""
    if path is None or not (path.exists() or path.is_symlink()):
        return
    if path.is_symlink():
        path.unlink()
        return
    try:
        shutil.rmtree(path)
    except OSError:
        for d, _, _ in os.walk(path):
            with contextlib.suppress(OSError):  # another sweep may be deleting the same trash
                os.chmod(d, os.stat(d).st_mode | stat.S_IRWXU)
        shutil.rmtree(path, ignore_errors=True)
