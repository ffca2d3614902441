"""The directory where runs' repositories live, `<common git dir>/openbot-worktrees/`, and its records.

    openbot-worktrees/.lock               flock: creation, removal and the sweep are serialized
    openbot-worktrees/<name>/             the run's checkout (the agent's; its `.git` file points below)
    openbot-worktrees/<name>.git/         the run's own repository (the agent's): objects, refs, config
    openbot-worktrees/<name>.owner.json   who runs there, on which branch (openbot's; the agent cannot
                                          write here: only <name>/ and <name>.git/ are writable to it)
    openbot-worktrees/<name>.carry/       openbot's private git dir while the branch is brought home
    openbot-worktrees/.trash-<name>*      what is being deleted (moved aside under the lock; at a run's
                                          end renamed on into OPENBOT_HOME/trash and deleted there by an
                                          `rm` of its own, not waited for; what is left, the sweep deletes)

Everything openbot decides about a run follows from its name and its owner record, never from files the
agent can rewrite.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from openbot import gate
from openbot.files import locked, write_atomic
from openbot.git.gitcmd import rmtree
from openbot.processes import identity, proc_start

RUNS_DIR = "openbot-worktrees"
OWNER_SUFFIX = ".owner.json"
KIND = "run-repo"  # owner records of the older linked worktrees have no kind: the sweep leaves them be


@dataclass(frozen=True)
class Module:
    """A submodule openbot checked out in a run (submodules.py)."""

    key: str  # its git dir below the superproject's: "modules/<name>", "modules/<a>/modules/<b>" nested
    path: str  # its checkout below the run's checkout
    base: str  # the commit it was checked out at
    parent: str  # the key of the module it is nested in, "" below the superproject


@dataclass
class RunRepo:
    name: str  # e.g. "<bot>-<run_id>" (no '/')
    root: Path  # <common_dir>/openbot-worktrees
    branch: str  # "openbot/<name>": the branch in the run repository and, once home, in the user's
    base_ref: str  # the user's branch at creation ("refs/heads/main"), "" if HEAD was detached
    base_commit: str  # sha the run started from
    home_tip: str  # the user's branch value when the run started ("" for a new run): the import's CAS
    common_dir: Path  # the user's repository
    modules: tuple[Module, ...] = ()  # the submodules openbot checked out (recorded in the owner record)
    notes: tuple[str, ...] = ()  # what could not be set up, one line each (not recorded)
    carried: tuple[str, ...] = ()  # the user's uncommitted paths `--with-changes` copied in (not recorded)

    @property
    def path(self) -> Path:
        """The checkout the agent works in."""
        return self.root / self.name

    @property
    def git_dir(self) -> Path:
        """The run's own repository (borrows the user's objects through objects/info/alternates)."""
        return self.root / f"{self.name}.git"

    @property
    def carrier(self) -> Path:
        return self.root / f"{self.name}.carry"

    @property
    def owner_file(self) -> Path:
        return self.root / f"{self.name}{OWNER_SUFFIX}"


@contextmanager
def runs_lock(common_dir: Path) -> Iterator[Path]:
    root = common_dir / RUNS_DIR
    root.mkdir(exist_ok=True)
    with locked(root / ".lock"):
        yield root


def free_name(root: Path, bot: str, run_id: str, taken: Callable[[str], bool]) -> str:
    """A name nothing uses yet (checkout, git dir, record, branch per `taken(branch)`); call under the lock.

    `<bot>-<run_id>` when free (run ids are a timestamp plus a random suffix), so the branch
    `openbot/<bot>-<run_id>` says which run made it."""
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", bot).strip("-") or "bot"
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    candidates = [f"{slug}-{re.sub(r'[^A-Za-z0-9_-]+', '-', run_id)}"] if run_id else []
    while True:
        name = candidates.pop() if candidates else f"{slug}-{stamp}-{secrets.token_hex(2)}"
        paths = (name, f"{name}.git", f"{name}.carry", f"{name}{OWNER_SUFFIX}")
        if not any(os.path.lexists(root / p) for p in paths) and not taken(f"openbot/{name}"):
            return name


def write_owner(rr: RunRepo, run_id: str, bot: str) -> None:
    """Record who owns the run repository, next to it and out of the sandboxed agent's reach."""
    owner = {
        "kind": KIND,
        "pid": os.getpid(),
        "pid_start": proc_start(os.getpid()),
        **identity(),
        "run_id": run_id,
        "bot": bot,
        "branch": rr.branch,
        "base_ref": rr.base_ref,
        "base_commit": rr.base_commit,
        "home_tip": rr.home_tip,
        "modules": [[m.key, m.path, m.base, m.parent] for m in rr.modules],
        "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    write_atomic(rr.owner_file, json.dumps(owner) + "\n")


def owners(root: Path) -> list[tuple[RunRepo, dict[str, object]]]:
    """The run repositories with an owner record, as openbot recorded them."""
    found = []
    for record in sorted(root.glob(f"*{OWNER_SUFFIX}")):
        try:
            owner = json.loads(record.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(owner, dict) or owner.get("kind") != KIND or not isinstance(owner.get("pid"), int):
            continue
        name = record.name.removesuffix(OWNER_SUFFIX)
        fields = [owner.get(k, "") for k in ("branch", "base_ref", "base_commit", "home_tip")]
        strs = [f for f in fields if isinstance(f, str)]
        if len(strs) != 4 or strs[0] != f"openbot/{name}":
            continue
        modules = _modules(owner.get("modules", []))
        found.append((RunRepo(name, root, strs[0], strs[1], strs[2], strs[3], root.parent, modules), owner))
    return found


def _modules(recorded: object) -> tuple[Module, ...]:
    """The submodules an owner record lists; anything that is not what openbot writes is dropped."""
    if not isinstance(recorded, list):
        return ()
    found = []
    for item in recorded:
        if isinstance(item, list) and len(item) == 4 and all(isinstance(v, str) for v in item):
            key, path, base, parent = item
            parts = [*key.split("/"), *path.split("/"), *parent.split("/")]
            if key.startswith("modules/") and ".." not in parts and not path.startswith("/"):
                found.append(Module(key, path, base, parent))
    return tuple(found)


def holder_of(root: Path, branch: str) -> RunRepo | None:
    """The run repository that works on `branch`, if any."""
    return next((rr for rr, _ in owners(root) if rr.branch == branch), None)


def record_home_tip(rr: RunRepo) -> None:
    """After an import: a later import (the sweep's, should removal fail) swaps from this value."""
    try:
        owner = json.loads(rr.owner_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    if isinstance(owner, dict):
        write_atomic(rr.owner_file, json.dumps({**owner, "home_tip": rr.home_tip}) + "\n")


def awaiting_home(common_dir: Path, branch: str) -> bool:
    """Is `branch` still in a run repository, not yet brought home (a killed run's, until the sweep)?"""
    root = common_dir / RUNS_DIR
    return root.is_dir() and holder_of(root, branch) is not None


def detach(rr: RunRepo) -> list[Path]:
    """Move a run's directories aside (so they are gone at once) and drop its record; returns the trash.
    Call under the lock."""
    trash = []
    for i, p in enumerate((rr.path, rr.git_dir, rr.carrier)):
        if os.path.lexists(p):
            dest = rr.root / f".trash-{rr.name}-{i}-{secrets.token_hex(2)}"
            os.replace(p, dest)
            trash.append(dest)
    rr.owner_file.unlink(missing_ok=True)
    return trash


def empty_trash(paths: list[Path]) -> None:
    for p in paths:
        rmtree(p)


def empty_trash_later(paths: list[Path]) -> None:
    """Hand the trash's directories to an `rm -rf` of their own, not waited for: deleting a checkout is
    most of a run's end and nothing needs to wait on it (the work is home; the trash is openbot's
    scratch). They are first renamed into openbot's own bin (outside_the_repository), so nothing is still
    being deleted in the user's repository once openbot has exited. What an rm killed leaves is emptied
    by a later one (the bin's old entries) or, left in the repository, by the next run's sweep
    (`.trash-*`). A symlink or a file is removed here, never followed (nor by `chmod -R`: -P)."""
    dirs = [p for p in paths if p.is_dir() and not p.is_symlink()]
    empty_trash([p for p in paths if p not in dirs])
    if not dirs:
        return
    dirs = outside_the_repository(dirs)
    # A directory without write permission (Go's module cache makes them) is opened up, then deleted.
    # At nice 19 the rm takes next to no core from openbot's own end, which goes on meanwhile (or from a
    # neighbour); without `nice` (127), the fallback deletes all the same. The rm has a session of its
    # own, and where the kernel groups each session for scheduling (autogroup, on by default in most
    # distributions' kernels) a task's nice counts only inside its session: the session's own nice is
    # set to 19 too (best effort: a kernel without autogroup has no such file).
    script = "{ echo 19 >/proc/self/autogroup; } 2>/dev/null; "
    script += 'nice -n 19 rm -rf -- "$@" || { chmod -R u+rwx -- "$@"; rm -rf -- "$@"; }'
    try:  # posix_spawn, not Popen: no object whose collection warns that its child still runs
        argv = ["sh", "-c", script, "openbot-trash", *map(str, dirs)]
        gate.spawn_detached(gate.TRASH_RM, argv)
    except OSError:
        empty_trash(dirs)


LEFT_OVER_SECS = 3600  # a bin entry renamed in this long ago is what a killed rm left, not one still at work


def outside_the_repository(dirs: list[Path]) -> list[Path]:
    """Each directory renamed into OPENBOT_HOME/trash (a rename: at once, where it is the same file
    system), with the bin's left-over entries; one that cannot be (another file system) stays where it is.
    A user who deletes the repository right after `openbot run` exits raced the detached rm there."""
    from openbot.paths import home, make_private_dir

    try:
        bin_dir = make_private_dir(home() / "trash")
        old = [p for p in bin_dir.iterdir() if time.time() - p.lstat().st_ctime > LEFT_OVER_SECS]
    except OSError:
        return dirs
    moved = []
    for d in dirs:
        dest = bin_dir / f"{d.name}-{secrets.token_hex(4)}"
        try:
            os.rename(d, dest)
        except OSError:  # EXDEV: another file system; deleted where it is
            dest = d
        moved.append(dest)
    return moved + old
