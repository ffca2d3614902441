"""The sandbox server: pid 1 of one bwrap sandbox that runs a session's commands one after another, each a
single new process spawned by this one (no bwrap, no Python start per command).

launch.py confines itself (Landlock, no capabilities) and then, given `--status-fd`, serves here: it reads
requests on the command pipe (`--command-fd`; each a 4-byte big-endian length, then NUL-separated fields),

    run  cwd  argc  argv...  KEY=VALUE...     start the command (posix_spawn, in a session of its own)
    sig  N                                    signal N to every process of the sandbox but this one

and after each command ends, kills everything else left in the PID namespace (`kill(-1, SIGKILL)` from
pid 1 reaches every process of the namespace but pid 1 itself) and reaps it all before it writes the
command's exit code (128 + N for signal N, as bwrap reports) as a line on the status pipe. Nothing a
command started outlives it — the guarantee of a PID namespace per command — and once openbot reads the
status, every writer of the shared output pipe (this process's stdout) is gone: what is left in the pipe
is all the command's.

openbot gone (the command pipe's writer closed) means no command is run, and a running one is killed with
everything it started: the server exits and the namespace dies with it. The server is not dumpable, so a
command (same uid, no capabilities) can neither ptrace it nor read its memory to skip the killing.
Standard library only: launch.py loads it by path, like landlock.py.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import struct
from collections.abc import Callable

GONE = 125  # openbot went away: nothing was run (or what ran was killed)


class Requests:
    """The command pipe, read into whole messages."""

    def __init__(self, fd: int) -> None:
        self.fd, self.buf, self.closed = fd, b"", False

    def fill(self) -> None:
        """One read (what is there, or waits for it); an empty read means openbot is gone."""
        try:
            chunk = os.read(self.fd, 1 << 16)
        except OSError:
            chunk = b""
        self.closed = self.closed or not chunk
        self.buf += chunk

    def pop(self) -> list[bytes] | None:
        """The fields of the next whole message already read, if there is one."""
        if len(self.buf) < 4:
            return None
        size = struct.unpack(">I", self.buf[:4])[0]
        if len(self.buf) < 4 + size:
            return None
        message, self.buf = self.buf[4 : 4 + size], self.buf[4 + size :]
        return message.split(b"\0")

    def next(self) -> list[bytes] | None:
        """The next message, waiting for it; None once openbot is gone."""
        while (message := self.pop()) is None:
            if self.closed:
                return None
            self.fill()
        return message


def serve(command_fd: int, status_fd: int, start: Callable[[list[bytes], bool], tuple[int, int]]) -> int:
    """Run commands until openbot closes the command pipe. `start` starts a command from a run request's
    fields (launch.py's `_start`; told whether this server runs SCHED_BATCH): (its pid, 0), or (0, the
    exit code) when it could not."""
    _not_dumpable()
    batch = _batch()
    for fd in (command_fd, status_fd):
        os.set_inheritable(fd, False)  # close-on-exec: no command may read requests or write a status
    requests = Requests(command_fd)
    while (message := requests.next()) is not None:
        if message[0] != b"run":
            continue  # a signal for a command that has ended already
        if _hung_up(command_fd):
            return GONE  # openbot died after sending it: nothing would stop the command
        pid, unstarted = start(message[1:], batch)
        code = _wait(pid, requests) if pid else unstarted
        _clear()
        if code is None:
            return GONE
        try:
            os.write(status_fd, b"%d\n" % code)
        except OSError:
            return GONE
    _clear()
    return 0


def _wait(pid: int, requests: Requests) -> int | None:
    """The command's exit code, passing on signals openbot sends meanwhile; None when openbot is gone."""
    exit_fd = os.pidfd_open(pid)
    poll = select.poll()
    poll.register(exit_fd, select.POLLIN)
    poll.register(requests.fd, select.POLLIN)
    try:
        while True:
            for fd, _ in poll.poll():
                if fd == exit_fd:
                    status = os.waitpid(pid, 0)[1]
                    code = os.waitstatus_to_exitcode(status)
                    return code if code >= 0 else 128 - code
                requests.fill()
                while (message := requests.pop()) is not None:
                    if message[0] == b"sig":
                        _kill_all(int(message[1]))
                if requests.closed:
                    return None
    finally:
        os.close(exit_fd)


def _kill_all(signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(-1, signum)  # from pid 1: every process of the namespace but this one


def _clear() -> None:
    """Kill and reap everything left in the namespace: every orphan is this process's child (pid 1)."""
    while True:
        _kill_all(signal.SIGKILL)
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def _batch() -> bool:
    """SCHED_BATCH (same weight, nice unchanged) for the server itself: a woken batch task does not preempt
    the task that woke it. openbot's request would otherwise preempt openbot on its own core before it
    goes back to waiting, and the command the server then spawns, with openbot still runnable there, is
    placed on the other core — behind a CPU-bound neighbour, for a scheduler tick or more (measured:
    8-9 of 15 commands, ~20 ms a 16-call run on 2 cores; docs/BENCHMARKS.md). Not a priority change: a
    policy it may leave, and the commands get SCHED_OTHER back. False where it cannot be set."""
    try:
        os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
    except (AttributeError, OSError):
        return False  # a kernel or filter without it: the server works as before
    return True


def _hung_up(fd: int) -> bool:
    poll = select.poll()
    poll.register(fd, select.POLLIN)
    return any(events & (select.POLLHUP | select.POLLERR) for _, events in poll.poll(0))


def _not_dumpable() -> None:
    import ctypes

    pr_set_dumpable = 4
    if ctypes.CDLL(None, use_errno=True).prctl(pr_set_dumpable, 0, 0, 0, 0):
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE)")
