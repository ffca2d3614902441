"""Lines the user types while a bot works — read only when stdin is an interactive terminal.

Headless runs (cron, CI, stdin closed or /dev/null) never read stdin, so they never wait on it and
never stop because of it. A run put in the background (`openbot run bot &`, or ctrl-z then `bg`) does
not read the terminal either: it checks that it is the terminal's foreground job before each read,
and ignores SIGTTIN so that a read racing a move to the background fails instead of stopping openbot.
"""

from __future__ import annotations

import errno
import os
import queue
import select
import signal
import sys
import threading
import time


def _foreground(fd: int) -> bool:
    """Whether reading `fd` now is safe: we are its foreground job, or it is a terminal that is not our
    controlling one (job control, and so SIGTTIN, only applies to the controlling terminal)."""
    try:
        return os.tcgetpgrp(fd) == os.getpgrp()
    except OSError as e:
        return e.errno == errno.ENOTTY


class Inbox:
    def __init__(self, fd: int | None = None) -> None:
        self._lines: queue.Queue[str] = queue.Queue()
        self.enabled = fd is not None
        if fd is not None:
            threading.Thread(target=self._read, args=(fd,), daemon=True, name="openbot-inbox").start()

    @classmethod
    def for_terminal(cls) -> Inbox:
        try:
            fd = sys.stdin.fileno() if sys.stdin is not None and sys.stdin.isatty() else None
        except (ValueError, OSError):  # stdin closed or not a real file
            fd = None
        if fd is not None and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTTIN, signal.SIG_IGN)
        return cls(fd)

    def _read(self, fd: int) -> None:
        pending = b""
        while True:
            if not _foreground(fd):
                time.sleep(0.5)
                continue
            try:
                ready, _, _ = select.select([fd], [], [], 0.5)
                if not ready:
                    continue
                chunk = os.read(fd, 4096)
            except OSError:  # EIO: moved to the background between the check and the read
                time.sleep(0.5)
                continue
            if not chunk:
                return  # end of input: the terminal is gone
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for raw in lines:
                line = raw.decode("utf-8", errors="replace").rstrip("\r")
                if line.strip():
                    self._lines.put(line)

    def take(self) -> list[str]:
        """Every line typed so far (non-blocking)."""
        lines = []
        while True:
            try:
                lines.append(self._lines.get_nowait())
            except queue.Empty:
                return lines

    def wait(self, timeout: float, cancel: threading.Event) -> list[str]:
        """Sleep up to `timeout` seconds; wake early on a typed line (returned) or on cancel."""
        deadline = time.monotonic() + timeout
        while (remaining := deadline - time.monotonic()) > 0 and not cancel.is_set():
            try:
                return [self._lines.get(timeout=min(0.1, remaining)), *self.take()]
            except queue.Empty:
                pass
        return self.take()
