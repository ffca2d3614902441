"""A line while the model thinks, for a run watched off a terminal (CI, `| tee`, a log file): without it a
long model call shows nothing until it ends, and a stalled run looks like a hung one.

The live view tells `Heartbeat` which events it saw: one after which openbot asks the model (a turn starts,
a command or tool returned) starts the wait, one that is the model's answer (tokens, text, a tool call, the
turn's end) ends it. Every `interval` seconds (60; OPENBOT_HEARTBEAT_SECS in tests) a wait that has lasted
that long is said once: "… waiting for the model (2 min)". A terminal has its status line instead.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

INTERVAL_SECS = 60.0
ASKS = frozenset({"turn_started", "command", "tool_result", "user_input"})
ANSWERS = frozenset(
    {"token_count", "text_delta", "message", "tool_call", "turn_completed", "turn_aborted", "session_ended"}
)


def waited(secs: float) -> str:
    return f"{int(secs)} s" if secs < 60 else f"{int(secs // 60)} min"


class Heartbeat:
    def __init__(self, say: Callable[[str], None]) -> None:
        self.say = say
        self.interval = float(os.environ.get("OPENBOT_HEARTBEAT_SECS") or INTERVAL_SECS)
        self.since: float | None = None
        self.stopped = threading.Event()
        self.thread: threading.Thread | None = None

    def saw(self, kind: str) -> None:
        if kind in ASKS:
            self.since = time.monotonic()
            if self.thread is None:  # the first wait starts the clock: a run that never asks has none
                self.thread = threading.Thread(target=self._beat, name="openbot-heartbeat", daemon=True)
                self.thread.start()
        elif kind in ANSWERS:
            self.since = None

    def stop(self) -> None:
        self.stopped.set()

    def _beat(self) -> None:
        while not self.stopped.wait(self.interval):
            since = self.since
            if since is not None and time.monotonic() - since >= self.interval:
                self.say(f"… waiting for the model ({waited(time.monotonic() - since)})")
