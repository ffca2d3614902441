"""Lines the user types while a bot works — read only when stdin is an interactive terminal.

Headless runs (cron, CI, stdin closed or /dev/null) never read stdin, so they never wait on it and
never stop because of it.
"""

from __future__ import annotations

import queue
import sys
import threading
import time
from typing import TextIO


class Inbox:
    def __init__(self, stream: TextIO | None = None) -> None:
        self._lines: queue.Queue[str] = queue.Queue()
        self.enabled = stream is not None
        if stream is not None:
            threading.Thread(target=self._read, args=(stream,), daemon=True, name="openbot-inbox").start()

    @classmethod
    def for_terminal(cls) -> Inbox:
        try:
            interactive = sys.stdin is not None and sys.stdin.isatty()
        except ValueError:  # stdin closed
            interactive = False
        return cls(sys.stdin if interactive else None)

    def _read(self, stream: TextIO) -> None:
        for line in stream:
            if line.strip():
                self._lines.put(line.rstrip("\n"))

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
