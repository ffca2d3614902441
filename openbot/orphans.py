"""Commands a dead run left running: found by their working directory, stopped before the sweep.

A run killed with SIGKILL cannot stop the agent's command (it runs in its own process group), so the
command goes on in a worktree that the next run's sweep is about to commit and remove.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path


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
