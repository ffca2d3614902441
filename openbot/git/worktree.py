"""The life of a bot's git worktree: create it, record its owner, remove it, sweep those of dead runs.

A run works in `<common_dir>/openbot-worktrees/<name>` on its own branch `openbot/<name>`, started from
the HEAD of the checkout the user is in; the user's checkout, index and branches are never written.
Creation is serialized per repository by an flock on `openbot-worktrees/.lock`, so parallel runs pick
distinct names and never race git's worktree metadata. Who owns a worktree (and on which branch) is
recorded in `openbot-worktrees/<name>.owner.json`, beside the checkout where the sandboxed bot cannot
write; everything else about a worktree follows from its name, never from files the bot can rewrite.

Checkout: pygit2 reads HEAD, status and writes commits, but the branch and checkout are made by one
`git worktree add -b` subprocess (hooks off: no user hook runs). Measured by scripts/bench_worktree.py
on a 20k-file repository (docs/BENCHMARKS.md): pygit2's `add_worktree` takes 1.6x the time of
`git worktree add` on disk and 2.5x on tmpfs, and the target is "no slower than git", so git checks out.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import secrets
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from openbot.errors import GitError, UsageError
from openbot.files import write_atomic
from openbot.git import gitops
from openbot.git.gitops import ActionOutcome, apply_action, commit_wip, run_git
from openbot.git.repo import RepoInfo
from openbot.processes import identity, owner_gone, proc_start, stop_processes_in

__all__ = [
    "ActionOutcome",
    "SweptWorktree",
    "Worktree",
    "apply_action",
    "commit_wip",
    "create_worktree",
    "remove_worktree",
    "reopen_branch",
    "sweep_dead",
]

WORKTREES_DIR = "openbot-worktrees"
OWNER_SUFFIX = ".owner.json"  # <common>/openbot-worktrees/<name>.owner.json
LEGACY_OWNER_FILE = "openbot-owner.json"  # in the admin dir, before openbot kept it out of the bot's reach
NO_HOOKS = ("-c", "core.hooksPath=/dev/null")  # a user's post-checkout hook has no place in a bot run


@dataclass
class Worktree:
    name: str  # worktree name, e.g. "<bot>-20261122T101500Z-3fa2" (no '/')
    path: Path  # <common_dir>/openbot-worktrees/<name>
    branch: str  # short branch name, "openbot/<name>" unless reopened
    base_ref: str  # the user's branch at creation ("refs/heads/main"), "" if HEAD was detached
    base_commit: str  # sha the branch started from
    admin_dir: Path  # <common_dir>/worktrees/<name>
    common_dir: Path


@dataclass(frozen=True)
class SweptWorktree:
    name: str
    branch: str
    wip_sha: str | None  # the recovered work, None if the worktree was clean or already gone
    run_id: str  # the dead run, "?" when its owner record did not say
    bot: str = "?"

    def __str__(self) -> str:
        saved = f"work saved as {self.wip_sha[:12]}" if self.wip_sha else "nothing uncommitted"
        return f"{self.name} of {self.bot} run {self.run_id}: {saved} on branch {self.branch}"


def create_worktree(repo: RepoInfo, bot: str, run_id: str, *, with_changes: bool = False) -> Worktree:
    """A new worktree on a new branch `openbot/<name>` from the HEAD of the user's checkout."""
    user = gitops.open_repo(repo.workdir)
    if user.head_is_unborn:
        raise UsageError(
            f"{repo.workdir} has no commits yet; make a first commit before running a bot",
            hint="git commit --allow-empty -m 'initial commit'",
        )
    base_ref = "" if user.head_is_detached else user.head.name
    base_commit = str(user.head.target)
    with _creation_lock(repo.common_dir):
        wt = _new_worktree(repo, user, bot, run_id, None, base_ref, base_commit)
        _add_checkout(repo, wt, ["-b", wt.branch, str(wt.path), base_commit], new_branch=True)
        _write_owner(wt, run_id, bot)
    if with_changes:
        try:
            gitops.carry_changes(user, repo.workdir, wt.path)
        except OSError as e:
            with _creation_lock(repo.common_dir) as root:
                gitops.rmtree(_detach(wt, root))
            run_git(repo.workdir, "branch", "-D", wt.branch, check=False)
            raise GitError(f"could not copy your uncommitted changes into the worktree: {e}") from e
    return wt


def reopen_branch(repo: RepoInfo, branch: str, bot: str, run_id: str) -> Worktree:
    """A new worktree on an existing branch (for --resume); base_commit is its merge-base with HEAD."""
    short = branch.removeprefix("refs/heads/")
    git = gitops.open_repo(repo.common_dir)
    try:
        ref = git.branches.local.get(short)
    except (ValueError, KeyError):  # not a valid branch name at all
        ref = None
    if ref is None:
        raise UsageError(
            f"branch {short} does not exist", hint="list bot branches: git branch --list 'openbot/*'"
        )
    if holders := gitops.checkouts_of(
        repo.common_dir, f"refs/heads/{short}", main_has_checkout=not git.is_bare
    ):
        raise UsageError(
            f"branch {short} is already checked out ({holders[0]})",
            hint="finish or stop the run that uses it",
        )
    user = gitops.open_repo(repo.workdir)
    tip = ref.target
    base_ref, base_commit = "", str(tip)
    if not user.head_is_unborn:
        base_ref = "" if user.head_is_detached else user.head.name
        base = git.merge_base(user.head.target, tip)
        base_commit = str(base) if base is not None else str(tip)
    with _creation_lock(repo.common_dir):
        wt = _new_worktree(repo, git, bot, run_id, short, base_ref, base_commit)
        _add_checkout(repo, wt, [str(wt.path), short], new_branch=False)
        _write_owner(wt, run_id, bot)
    return wt


def remove_worktree(wt: Worktree, wip_message: str) -> str | None:
    """Commit leftover work, delete the directory and git's metadata; keeps the branch. Idempotent.

    If the work cannot be committed, GitError is raised and the directory is left in place.
    """
    wip = None
    if wt.path.is_dir():  # whatever the bot did to its `.git`: commit_wip trusts only wt's own paths
        wip = commit_wip(wt, wip_message)
    try:
        with _creation_lock(wt.common_dir) as root:
            trash = _detach(wt, root)
    except OSError as e:
        raise GitError(f"could not remove the worktree {wt.path}: {e}") from e
    gitops.rmtree(trash)
    return wip


def sweep_dead(repo: RepoInfo) -> list[SweptWorktree]:
    """Recover and remove openbot worktrees whose run certainly died (or whose directory is gone).

    Only openbot's own entries are touched: the user's linked worktrees are never pruned, not even one
    whose directory is missing for a while (an unmounted disk).
    """
    swept: list[SweptWorktree] = []
    trash: list[Path | None] = []
    with _creation_lock(repo.common_dir) as root:
        for name, owner in _owners(root, repo.common_dir):
            wt = _recorded(repo.common_dir, root, name, owner)
            missing = not wt.path.exists()
            if not owner_gone(owner, missing):
                continue
            run_id = str(owner.get("run_id", "?"))
            wip = None
            if not missing:
                stop_processes_in(wt.path)  # the dead run's command may still be writing there
                try:
                    wip = commit_wip(wt, f"openbot: WIP recovered from dead run {run_id}")
                except GitError:
                    continue  # keep the directory rather than lose the work
            trash.append(_detach(wt, root))
            swept.append(SweptWorktree(wt.name, wt.branch, wip, run_id, str(owner.get("bot", "?"))))
        trash += [p for p in root.glob(".trash-*")]  # left by a removal that was itself interrupted
    for p in trash:
        gitops.rmtree(p)
    return swept


@contextmanager
def _creation_lock(common_dir: Path) -> Iterator[Path]:
    root = common_dir / WORKTREES_DIR
    root.mkdir(exist_ok=True)
    with open(root / ".lock", "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)  # released when the file closes, or when the process dies
        yield root


def _new_worktree(
    repo: RepoInfo, git: Any, bot: str, run_id: str, branch: str | None, base_ref: str, base_commit: str
) -> Worktree:
    """A Worktree whose name nothing uses yet (dir, git metadata, new branch); call under the lock.

    The name is `<bot>-<run_id>` when free (run ids are a timestamp plus a random suffix), so the branch
    `openbot/<bot>-<run_id>` says which run made it."""
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", bot).strip("-") or "bot"
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    candidates = [f"{slug}-{re.sub(r'[^A-Za-z0-9_-]+', '-', run_id)}"] if run_id else []
    while True:
        name = candidates.pop() if candidates else f"{slug}-{stamp}-{secrets.token_hex(2)}"
        common = repo.common_dir
        path, admin = common / WORKTREES_DIR / name, common / "worktrees" / name
        wt = Worktree(name, path, branch or f"openbot/{name}", base_ref, base_commit, admin, common)
        taken = branch is None and git.references.get(f"refs/heads/{wt.branch}") is not None
        if not (taken or wt.path.exists() or wt.admin_dir.exists()):
            return wt


def _add_checkout(repo: RepoInfo, wt: Worktree, args: list[str], *, new_branch: bool) -> None:
    """`git worktree add`; on any failure (Ctrl-C included) undo everything it made, then re-raise."""
    try:
        run_git(repo.workdir, *NO_HOOKS, "worktree", "add", "--quiet", *args)
        linked = gitops.checkout_path(wt.admin_dir)
        if linked is None or linked.resolve() != wt.path.resolve():
            raise GitError(f"git put the metadata of {wt.path} somewhere unexpected (not {wt.admin_dir})")
    except BaseException:
        gitops.rmtree(_detach(wt, wt.path.parent))
        if new_branch:
            run_git(repo.workdir, "branch", "-D", wt.branch, check=False)
        raise


def _detach(wt: Worktree, root: Path) -> Path | None:
    """Move the checkout aside (so it is gone at once) and prune git's metadata; returns what to delete."""
    import pygit2

    trash = None
    if wt.path.exists() or wt.path.is_symlink():
        trash = root / f".trash-{wt.name}"
        os.replace(wt.path, trash)
    try:
        gitops.open_repo(wt.common_dir).lookup_worktree(wt.admin_dir.name).prune(3)  # 3 = valid | locked
    except (KeyError, pygit2.GitError, GitError):
        pass  # already pruned
    shutil.rmtree(wt.admin_dir, ignore_errors=True)  # named by openbot's record: always ours
    (root / f"{wt.name}{OWNER_SUFFIX}").unlink(missing_ok=True)
    return trash


def _write_owner(wt: Worktree, run_id: str, bot: str) -> None:
    """Record who owns the worktree next to it, out of the sandboxed bot's reach (unlike its admin dir)."""
    owner = {
        "pid": os.getpid(),
        "pid_start": proc_start(os.getpid()),
        **identity(),
        "run_id": run_id,
        "bot": bot,
        "branch": wt.branch,
        "base_commit": wt.base_commit,
        "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    write_atomic(wt.path.parent / f"{wt.name}{OWNER_SUFFIX}", json.dumps(owner) + "\n")


def _owners(root: Path, common_dir: Path) -> list[tuple[str, dict[str, Any]]]:
    """openbot's worktrees by name with their owner records, the older ones (in the admin dir) included."""
    found = {}
    admin_root = common_dir / "worktrees"
    for admin in sorted(admin_root.iterdir()) if admin_root.is_dir() else []:
        if (old := _read_owner(admin / LEGACY_OWNER_FILE)) is not None:
            # the bot could write this file: the branch it names is not believed (see _recorded)
            found[admin.name] = {k: v for k, v in old.items() if k not in ("branch", "base_commit")}
    for record in root.glob(f"*{OWNER_SUFFIX}"):
        if (owner := _read_owner(record)) is not None:
            found[record.name.removesuffix(OWNER_SUFFIX)] = owner
    return sorted(found.items())


def _recorded(common_dir: Path, root: Path, name: str, owner: dict[str, Any]) -> Worktree:
    """The worktree an owner record stands for; its paths follow from its name, never from git's files."""
    admin = common_dir / "worktrees" / name
    branch = owner.get("branch")
    if not isinstance(branch, str) or not branch:
        # an older record names no branch; HEAD is the bot's to rewrite, so only an openbot branch counts
        try:
            head = (admin / "HEAD").read_text(encoding="utf-8").strip().removeprefix("ref: refs/heads/")
        except (OSError, UnicodeDecodeError):
            head = ""
        branch = head if head.startswith("openbot/") else f"openbot/{name}"
    return Worktree(name, root / name, branch, "", str(owner.get("base_commit", "")), admin, common_dir)


def _read_owner(path: Path) -> dict[str, Any] | None:
    try:
        owner = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return owner if isinstance(owner, dict) and isinstance(owner.get("pid"), int) else None
