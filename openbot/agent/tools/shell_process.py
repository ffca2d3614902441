"""One command's process for the shell tool: pump its output until it is done, and stop what it left.

The command is the leader of its own process group; `_Run.pump` reads its merged output through a
selector that also watches a pidfd, so the end of the command is seen at once, checks cancellation and
the deadline every POLL_SECS, and afterwards stops whatever the command left running in its group
(SIGTERM, then SIGKILL after KILL_GRACE_SECS). The leader stays unreaped until then, so its pid (= the
group id) cannot be reused by an unrelated process meanwhile. A command of the agent's sandbox server
(shell_server.py) is driven the same way through its server: `Command` is what both provide.
"""

from __future__ import annotations

import fcntl
import os
import selectors
import signal
import threading
import time
from typing import Protocol

from openbot import gate
from openbot.agent.tools.trim_output import OutputCompactor
from openbot.processes import reap_orphans
from openbot.redact import StreamRedactor

CHUNK = 1 << 20
PIPE_SIZE = 1 << 20  # a bigger pipe means fewer, larger reads when a command floods output
POLL_SECS = 0.1  # how often cancellation and the deadline are checked
KILL_GRACE_SECS = 2.0  # SIGTERM first; SIGKILL whatever is left after this
DRAIN_SECS = 0.5  # after bash exits, how long a background process may keep the output pipe open


def _exited(proc: gate.Popen[bytes]) -> bool:
    """Has the process exited? Leaves it unreaped, so its pid (= the group id) cannot be reused yet."""
    if not hasattr(os, "waitid"):  # not Linux: reaping opens a tiny pid-reuse window, nothing worse
        return proc.poll() is not None
    try:
        return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _group_alive(pgid: int) -> bool:
    """Is any process of the group still running (zombies do not count)? Reads /proc; Linux only."""
    pids = [p for p in os.listdir("/proc") if p.isdigit()]
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 2 and fields[2] == str(pgid).encode() and fields[0] != b"Z":
            return True
    return False


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _stop_group(pgid: int) -> None:
    """SIGTERM every process left in the group, then SIGKILL after KILL_GRACE_SECS if any remain."""
    if not os.path.exists("/proc/self/stat"):  # no way to tell who is left: no grace period
        _signal_group(pgid, signal.SIGKILL)
        return
    if not _group_alive(pgid):
        return
    _signal_group(pgid, signal.SIGTERM)
    deadline = time.monotonic() + KILL_GRACE_SECS
    while time.monotonic() < deadline:
        if not _group_alive(pgid):
            return
        time.sleep(0.05)
    _signal_group(pgid, signal.SIGKILL)


def _exit_fd(pid: int) -> int:
    """A pidfd that turns readable when the process exits (Linux 5.3+), or -1: then the exit is polled."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return -1


# A command's full output log is bounded like everything else openbot keeps: past this, a marker says so.
LOG_MAX_BYTES = 32 << 20
LOG_CAPPED = b"\n[openbot: the log stops here, at 32 MB; the rest of the command's output was not kept]\n"


class Popened:
    """A command that is a process of openbot's own: bwrap, or the command itself (unconfined, Landlock
    only). `contained`: in a PID namespace of its own that dies with it (bwrap), so nothing it started
    can be left in its process group once it has exited — no /proc scan is needed."""

    drained_at_exit = False  # a background process may still hold the output open

    def __init__(self, proc: gate.Popen[bytes], contained: bool = False) -> None:
        self.proc, self.contained = proc, contained
        self.pidfd = -1

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    def output_fd(self) -> int:
        assert self.proc.stdout is not None
        return self.proc.stdout.fileno()

    def exit_fd(self) -> int:
        self.pidfd = _exit_fd(self.proc.pid)
        return self.pidfd

    def exited(self) -> bool:
        return _exited(self.proc)

    def signal(self, signum: int) -> None:
        _signal_group(self.proc.pid, signum)

    def stop_rest(self) -> None:
        if self.contained:  # its namespace is gone with it; the group holds at most exiting bwrap processes
            _signal_group(self.proc.pid, signal.SIGKILL)
        else:
            _stop_group(self.proc.pid)

    def finish(self, exited: bool) -> None:
        assert self.proc.stdout is not None
        if self.pidfd >= 0:
            os.close(self.pidfd)
        self.proc.stdout.close()
        if not exited:
            _signal_group(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        if self.contained:
            reap_orphans()  # bwrap's init, orphaned to openbot (a subreaper) as its bwrap exited


class Command(Protocol):
    """What `_Run` drives: a process of openbot's (`Popened`) or a command of a sandbox server."""

    drained_at_exit: bool

    @property
    def returncode(self) -> int | None: ...
    def output_fd(self) -> int: ...
    def exit_fd(self) -> int: ...  # readable once it has ended, or -1 (then polled)
    def exited(self) -> bool: ...
    def signal(self, signum: int) -> None: ...
    def stop_rest(self) -> None: ...  # after its end: what it left running
    def finish(self, exited: bool) -> None: ...  # last: kill it if it has not exited, reap


class _Run:
    """One running command: pumps its output to the log file and the compactor until it is done."""

    def __init__(
        self, cmd: Command, log_fd: int, compactor: OutputCompactor, redactor: StreamRedactor
    ) -> None:
        self.cmd = cmd
        self.log_fd = log_fd
        self.compactor = compactor
        self.redactor = redactor
        self.killed = ""  # "" | "timeout" | "cancelled"
        self.logged = 0  # bytes of output so far (the log keeps at most LOG_MAX_BYTES of them)

    def _read(self, fd: int) -> bool:
        """Read one chunk; False at end of output."""
        data = os.read(fd, CHUNK)
        if data:
            self._keep(self.redactor.feed(data))
        return bool(data)

    def _keep(self, data: bytes) -> None:
        if data:
            room = LOG_MAX_BYTES - self.logged
            if room >= 0:
                os.write(self.log_fd, data[:room] + (LOG_CAPPED if len(data) > room else b""))
            self.logged += len(data)
            self.compactor.feed(data)

    def _kill_if_due(self, now: float, deadline: float, cancel: threading.Event, killed_at: float) -> float:
        """SIGTERM the group at the deadline or on cancellation, SIGKILL it after the grace; the time of
        the SIGTERM (0 while none was sent)."""
        if not self.killed and (cancel.is_set() or now >= deadline):
            self.killed = "cancelled" if cancel.is_set() else "timeout"
            self.cmd.signal(signal.SIGTERM)
            return now
        if self.killed and killed_at > 0 and now - killed_at > KILL_GRACE_SECS:
            self.cmd.signal(signal.SIGKILL)
            return -1.0  # sent: not again
        return killed_at

    def pump(self, deadline: float, cancel: threading.Event) -> None:
        """Until the command has exited and its output is closed (or DRAIN_SECS after the exit). The
        selector wakes on output and, through a pidfd, on the exit itself: no polling delay."""
        fd = self.cmd.output_fd()
        try:
            fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_SIZE)
        except OSError:
            pass  # above /proc/sys/fs/pipe-max-size: the default size works, just slower
        sel = selectors.DefaultSelector()
        sel.register(fd, selectors.EVENT_READ)
        exit_fd = self.cmd.exit_fd()
        if exit_fd >= 0:
            sel.register(exit_fd, selectors.EVENT_READ)
        is_open, exited_at, killed_at = True, 0.0, 0.0
        try:
            while True:
                now = time.monotonic()
                killed_at = self._kill_if_due(now, deadline, cancel, killed_at)
                if not exited_at and self.cmd.exited():
                    exited_at = now
                    if exit_fd >= 0:
                        sel.unregister(exit_fd)
                done = not is_open or self.cmd.drained_at_exit or now - exited_at > DRAIN_SECS
                if exited_at and done:
                    break
                if not is_open and exit_fd < 0:
                    time.sleep(POLL_SECS / 2)
                    continue
                for key, _ in sel.select(POLL_SECS):
                    if key.fd == fd and not self._read(fd):
                        is_open = False
                        sel.unregister(fd)
            self._end(is_open, sel, fd)
        finally:
            sel.close()
            self.cmd.finish(bool(exited_at))

    def _end(self, is_open: bool, sel: selectors.BaseSelector, fd: int) -> None:
        """Stop what the command left running, then keep whatever is still buffered in the pipe."""
        self.cmd.stop_rest()
        # Whatever is still buffered in the pipe, without waiting on an escaped writer.
        while is_open and sel.select(0):
            is_open = self._read(fd)
        self._keep(self.redactor.flush())
