"""Other openbot processes: is a run (its pid, on which machine) still alive, and what did a dead one
leave running?

Liveness is judged conservatively — when unsure, a process counts as alive, so its worktree and records
are left alone. A run killed with SIGKILL cannot stop the agent's command (it runs in its own process
group), so the command goes on in a worktree that the next run's sweep is about to commit and remove:
`stop_processes_in` finds such leftovers by the mark every command of a run carries in its environment
(`run_mark`), inherited by everything it starts whatever its process group, session or working directory —
and never touches a process without it (the user's shell or editor open in that worktree).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
from pathlib import Path
from typing import Any


def identity() -> dict[str, str | None]:
    """This process's machine, boot and pid namespace (containers may share a hostname, not pids)."""
    ident: dict[str, str | None] = {"host": socket.gethostname(), "boot_id": None, "pid_ns": None}
    with contextlib.suppress(OSError):
        ident["boot_id"] = Path("/proc/sys/kernel/random/boot_id").read_text(encoding="utf-8").strip()
    with contextlib.suppress(OSError):
        ident["pid_ns"] = os.readlink("/proc/self/ns/pid")
    return ident


def proc_stat(pid: int) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command name (state first), or None."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()  # the command name may hold spaces and parentheses


def proc_start(pid: int) -> int | None:
    """The process start time (clock ticks since boot) and so a guard against a recycled pid."""
    fields = proc_stat(pid)
    return int(fields[19]) if fields else None


def alive(pid: int, started: int | None = None) -> bool:
    """Whether `pid` (started at `started`, when known) is a live process on this machine."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # someone else's process, but it exists
    fields = proc_stat(pid)
    if fields is None:
        return True  # no /proc: trust kill(0)
    if fields[0] in ("Z", "X"):
        return False  # killed and not yet reaped
    return started is None or int(fields[19]) == started


def owner_gone(owner: dict[str, Any], missing: bool) -> bool:
    """Whether the run owning a worktree is certainly gone; when unsure, its worktree stays."""
    me = identity()
    if owner.get("host") != me["host"]:
        return False  # another machine's run: it may well be alive
    if owner.get("boot_id") and me["boot_id"] and owner["boot_id"] != me["boot_id"]:
        return True  # the machine rebooted since: every process of that boot is gone
    if owner.get("pid_ns") and me["pid_ns"] and owner["pid_ns"] != me["pid_ns"]:
        return False  # another container with this hostname: its pids mean nothing here
    return missing or not alive(owner["pid"], owner.get("pid_start"))


RUN_MARK = "OPENBOT_RUN_WORKDIR"


def run_mark(workdir: Path) -> dict[str, str]:
    """The environment entry that marks a run's commands (and all they start) as that run's."""
    return {RUN_MARK: str(workdir.resolve())}


def processes_in(directory: Path) -> list[int]:
    """Pids whose working directory is `directory` or below it (Linux /proc; [] elsewhere)."""
    root = directory.resolve()
    found = []
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else []:
        if not entry.name.isdigit():
            continue
        try:
            cwd = Path(os.readlink(entry / "cwd"))
        except OSError:
            continue
        if cwd == root or root in cwd.parents:
            found.append(int(entry.name))
    return found


def marked_processes(directory: Path) -> list[int]:
    """Pids that a run in `directory` started: their environment carries its `run_mark`."""
    mark = f"{RUN_MARK}={run_mark(directory)[RUN_MARK]}".encode()
    found = []
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else []:
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue  # gone, or another user's process: never ours to stop
        if mark in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def descends_from(pid: int, ancestor: int) -> bool:
    """Whether `ancestor` is among `pid`'s parents (Linux /proc)."""
    for _ in range(256):  # a parent chain is short; never loop on a /proc read mid-exit
        fields = proc_stat(pid)
        if fields is None or int(fields[1]) <= 1:
            return False
        pid = int(fields[1])
        if pid == ancestor:
            return True
    return False


def stop_processes_in(directory: Path, *, sparing: frozenset[tuple[int, int | None]] = frozenset()) -> int:
    """SIGKILL every process the run in `directory` started (its forks too); returns how many.
    `sparing`: (pid, start time) of processes left running — a live run's MCP servers as they were once
    started (`marked_now`); whatever they started since is stopped like the agent's own."""
    stopped: set[int] = set()
    for _ in range(50):  # a process may fork while we look: go again until none is left
        pids = [p for p in marked_processes(directory) if alive(p) and (p, proc_start(p)) not in sparing]
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
            stopped.add(pid)
    return len(stopped)


def marked_now(directory: Path) -> frozenset[tuple[int, int | None]]:
    """(pid, start time) of the processes carrying the run's mark that descend from this process now."""
    me = os.getpid()
    return frozenset((p, proc_start(p)) for p in marked_processes(directory) if descends_from(p, me))


PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> None:
    """Make openbot the reaper of what its children orphan (Linux; elsewhere nothing happens). bwrap's
    outer process exits before its namespace's init (docs/SANDBOX.md), which would then be reaped by
    whoever reaps orphans on the machine, its CPU uncounted and nothing waiting for it: as a subreaper,
    openbot gets it, and `reap_orphans` waits for it."""
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def reap_orphans(wait_secs: float = 1.0) -> int:
    """Reap the sandbox inits orphaned to openbot, waiting up to `wait_secs` for those still exiting (an
    orphaned init is always on its way out: its command, or its bwrap, is gone); returns how many.

    Only namespace inits (pid 1 of a PID namespace of their own, per /proc's NSpid): openbot never starts
    one itself, so no exit status a `Popen` of openbot's waits for is taken."""
    import time

    deadline, reaped = time.monotonic() + wait_secs, 0
    for pid in _orphaned_inits():
        with contextlib.suppress(OSError):
            if _exited_by(pid, deadline - time.monotonic()):
                reaped += os.waitpid(pid, os.WNOHANG)[0] == pid
    return reaped


def _orphaned_inits() -> list[int]:
    found = []
    for task in os.listdir("/proc/self/task") if os.path.isdir("/proc/self/task") else []:
        with contextlib.suppress(OSError):
            found += [int(p) for p in Path(f"/proc/self/task/{task}/children").read_text().split()]
    return [pid for pid in found if _namespace_init(pid)]


def _namespace_init(pid: int) -> bool:
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("NSpid:"):
                return len(line.split()) > 2
    return False


def _exited_by(pid: int, secs: float) -> bool:
    """Has `pid` (a child) exited, waiting up to `secs` for it on a pidfd (without one: only now)?"""
    import select

    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        return True  # waitpid(WNOHANG) says
    try:
        return bool(select.select([fd], [], [], max(secs, 0.0))[0])
    finally:
        os.close(fd)
