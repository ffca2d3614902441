"""Other openbot processes: is a run (its pid, on which machine) still alive, and what did a dead one
leave running?

Liveness is judged conservatively — when unsure, a process counts as alive, so its worktree and records
are left alone. A run killed with SIGKILL cannot stop the agent's command (it runs in its own process
group), so the command goes on in a worktree that the next run's sweep is about to commit and remove:
`stop_processes_in` finds such leftovers by their working directory.
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


def stop_processes_in(directory: Path) -> int:
    """SIGKILL the process groups of everything still working in `directory`; returns how many."""
    own = {os.getpid(), os.getpgrp()}
    groups = set()
    for pid in processes_in(directory):
        try:
            groups.add(os.getpgid(pid))
        except ProcessLookupError:
            continue
    for pgid in groups - own:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    return len(groups - own)
