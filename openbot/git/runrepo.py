"""The run's own repository: the agent may do anything to it, and the user's repository is never written.

A run works in a checkout `openbot-worktrees/<name>/` of a repository `openbot-worktrees/<name>.git/`
that openbot makes from scratch: its own object store (which borrows the user's objects read-only
through `objects/info/alternates`), its own refs, config and hooks. The sandbox makes only those
two directories writable, so whatever the agent does — rewriting objects, refs, reflogs, config,
hooks — happens to its own repository. It starts with copies of the user's hooks and filter drivers
(carryover.py), which the agent's own git commands then run inside the sandbox. At the end openbot
brings the run's branch home (home.py).

Creation is one `git read-tree` (checkout) plus a few small files: as fast as `git worktree add`
(scripts/bench_worktree.py, docs/BENCHMARKS.md).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from openbot.errors import GitError, UsageError
from openbot.git import lfs, repodrivers, submodules, userrepo
from openbot.git.carryover import SETUP_EXCLUDES, carried_config, config_basics, config_text, copy_hooks
from openbot.git.gitcmd import open_repo, run_git
from openbot.git.repo import RepoInfo

if TYPE_CHECKING:
    import pygit2

from openbot.git.runsdir import (
    RunRepo,
    detach,
    empty_trash,
    empty_trash_later,
    free_name,
    holder_of,
    runs_lock,
    write_owner,
)


def create_run_repo(repo: RepoInfo, bot: str, run_id: str, *, with_changes: bool = False) -> RunRepo:
    """A new run repository on a new branch `openbot/<name>` from the HEAD of the user's checkout."""
    head = userrepo.head(repo.workdir)  # git, not pygit2: a run's start does without its import
    if not head.commit:
        raise UsageError(
            f"{repo.workdir} has no commits yet; make a first commit before running a bot",
            hint="git commit --allow-empty -m 'initial commit'",
        )
    with runs_lock(repo.common_dir) as root:
        taken = lambda b: userrepo.has_ref(repo.workdir, f"refs/heads/{b}")  # noqa: E731
        name = free_name(root, bot, run_id, taken)
        rr = RunRepo(name, root, f"openbot/{name}", head.ref, head.commit, "", repo.common_dir)
        _make(rr, _checkout_config(repo))
        write_owner(rr, run_id, bot)
    if with_changes:
        try:
            rr.carried = tuple(carry_changes(open_repo(repo.workdir), repo.workdir, rr.path))
        except OSError as e:
            with runs_lock(repo.common_dir):
                trash = detach(rr)
            empty_trash(trash)
            raise GitError(f"could not copy your uncommitted changes into the run's checkout: {e}") from e
    return rr


def reopen_run_repo(repo: RepoInfo, branch: str, bot: str, run_id: str, start: str = "") -> RunRepo:
    """A new run repository continuing the user's branch `branch` (for --resume).

    `start` is where the branch starts when it no longer exists (a run without commits dropped it)."""
    short = branch.removeprefix("refs/heads/")
    user = open_repo(repo.common_dir)
    try:
        ref = user.references.get(f"refs/heads/{short}")
    except (ValueError, KeyError):  # not a valid branch name at all
        ref = None
    if (ref is None and not start) or not short.startswith("openbot/"):
        raise UsageError(
            f"branch {short} does not exist", hint="list bot branches: git branch --list 'openbot/*'"
        )
    tip = str(ref.target) if ref is not None else start
    base_ref, base_commit = "", tip
    head = open_repo(repo.workdir)
    if not head.head_is_unborn:
        base_ref = "" if head.head_is_detached else head.head.name
        base = user.merge_base(head.head.target, tip)
        base_commit = str(base) if base is not None else tip
    name = short.removeprefix("openbot/")
    if "/" in name or name.startswith("."):
        raise UsageError(f"branch {short} was not made by openbot", hint="resume a run of this bot")
    with runs_lock(repo.common_dir) as root:
        if holder_of(root, short) is not None or os.path.lexists(root / name):
            raise UsageError(
                f"branch {short} is already checked out ({root / name})",
                hint="finish or stop the run that uses it",
            )
        rr = RunRepo(name, root, short, base_ref, base_commit, "" if ref is None else tip, repo.common_dir)
        _make(rr, userrepo.config(repo.common_dir, git_dir=True), tip)
        write_owner(rr, run_id, bot)
    return rr


def remove_run_repo(rr: RunRepo, later: bool = False) -> None:
    """Delete the run's checkout and repository (call once its branch is home). Idempotent. `later`:
    they are moved aside now and deleted by a process of their own (runsdir.empty_trash_later)."""
    try:
        with runs_lock(rr.common_dir):
            trash = detach(rr)
    except OSError as e:
        raise GitError(f"could not remove the run's repository {rr.git_dir}: {e}") from e
    if later:
        empty_trash_later(trash)
    else:
        empty_trash(trash)


def _checkout_config(repo: RepoInfo) -> userrepo.ConfigEntries:
    """The configuration of the user's checkout. In the main checkout (its git dir is the common one) the
    git dir's read names the same files, config.worktree included, and preflight's LFS check has made it
    (userrepo.keep): one git process fewer before the first model request."""
    if not repo.is_linked_worktree:
        return userrepo.config(repo.common_dir, git_dir=True)
    return userrepo.config(repo.workdir)


def _make(rr: RunRepo, user: userrepo.ConfigEntries, tip: str = "") -> None:
    """Write the run's git dir and check the branch out, its submodules too; on any failure (Ctrl-C too)
    undo it all."""
    commit = tip or rr.base_commit
    try:
        init_git_dir(rr.git_dir, user, rr.common_dir, commit, rr.branch)
        rr.path.mkdir()
        (rr.path / ".git").write_text(f"gitdir: {rr.git_dir}\n", encoding="utf-8")
        git = (f"--git-dir={rr.git_dir}", f"--work-tree={rr.path}")
        # A resume checks out the agent's commit: the user's drivers that would run its files stay off.
        off = repodrivers.checkout_off(rr.common_dir, commit) if commit != rr.base_commit else []
        options = (*lfs.checkout_options(rr.common_dir), *off)
        run_git(rr.path, *git, *options, "read-tree", "--reset", "-u", "HEAD")
        modules, notes = submodules.set_up(rr.common_dir, rr.git_dir, rr.path, commit, _module_git_dir)
        rr.modules, rr.notes = tuple(modules), tuple(notes)
    except BaseException:
        empty_trash(detach(rr))
        raise


def _module_git_dir(git_dir: Path, user_git: Path, commit: str) -> None:
    init_git_dir(git_dir, userrepo.config(user_git, git_dir=True), user_git, commit)


def init_git_dir(
    g: Path, user: userrepo.ConfigEntries, user_git: Path, commit: str, branch: str = ""
) -> None:
    """What `git init` makes, minus the sample hooks, plus alternates onto the user's object store
    (`user_git`); HEAD on `branch` at `commit`, or detached at `commit` (a submodule's). `user` is the
    user's configuration (userrepo.config)."""
    for d in ("objects/info", "objects/pack", "refs/tags", "refs/heads", "info", "hooks"):
        (g / d).mkdir(parents=True)
    (g / "objects" / "info" / "alternates").write_text(f"{user_git / 'objects'}\n", encoding="utf-8")
    if branch:
        (g / "refs" / "heads" / branch).parent.mkdir(parents=True, exist_ok=True)
        (g / "refs" / "heads" / branch).write_text(f"{commit}\n", encoding="utf-8")
    (g / "HEAD").write_text(f"ref: refs/heads/{branch}\n" if branch else f"{commit}\n", encoding="utf-8")
    # The user's hooks and filter drivers (clean filters, git-lfs): the agent's commits run them, confined.
    # git-lfs's driver only where git-lfs is installed, and none of the user's `lfs.*` settings: the run's
    # LFS store is its own `lfs/` (lfs.py), and there is nowhere to download from.
    with_lfs = lfs.installed()
    carried = {
        k: v
        for k, v in carried_config(user).items()
        if not k.lower().startswith("lfs.") and (with_lfs or not k.lower().startswith("filter.lfs."))
    }
    (g / "config").write_text(config_basics(user) + config_text(carried), encoding="utf-8")
    copy_hooks(user_git, g, next((v for k, v in carried.items() if k.lower() == "core.hookspath"), None))
    for name in ("info/exclude", "shallow"):  # the user's private ignores; a shallow clone's boundary
        src = user_git / name
        if src.is_file() and not src.is_symlink():
            shutil.copyfile(src, g / name)
    with open(g / "info" / "exclude", "a", encoding="utf-8") as f:
        f.write(f"\n{SETUP_EXCLUDES}")


def carry_changes(user: pygit2.Repository, workdir: Path, target: Path) -> list[str]:
    """Copy the user's uncommitted state (edits, deletions, untracked non-ignored files) into `target`;
    returns the paths carried."""
    carried = sorted(user.status(untracked_files="all", ignored=False))
    for rel in carried:
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
    return carried
