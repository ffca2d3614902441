"""ctrl-c, SIGTERM and SIGHUP (a closed terminal or ssh session) during a run: the first one stops the
work cleanly, a second one exits at once.

The first signal sets the cancel event (the shell tool kills its process group, the turn and the sleep
end) and, while a model call is in flight, raises `Interrupted` to abandon it. A second signal exits
immediately — except while the run is saving its work (`finishing`), when it waits for that and only
a third one exits; a worktree left that way is recovered as a WIP commit by the next run's sweep.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

from openbot.agent.models.base import ModelBackend, ModelReply, ModelRequest
from openbot.events import EventSink
from openbot.run.protocols import Guard
from openbot.stops import Cancel, Interrupted

_Handler = Callable[[int, FrameType | None], Any] | int | signal.Handlers | None


def _say(text: str) -> None:
    try:
        sys.stderr.write(f"\n{text}\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # stderr's reader is gone (a closed pipe): the stop goes on regardless
        pass


class SignalGuard:
    def __init__(self, cancel: Cancel) -> None:
        self.cancel = cancel
        self.count = 0
        self.in_model_call = False
        self.finishing = False  # saving work: a second signal waits, a third one exits
        self._old: dict[int, _Handler] = {}

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.count += 1
        if self.count > 1:
            if self.finishing and self.count == 2:
                _say("openbot: saving the bot's work (WIP commit), a few seconds; signal again to abandon it")
                return
            _say("openbot: exiting now; the next run in this repo recovers the worktree as a WIP commit")
            os._exit(128 + signum)
        self.cancel.cancel(signum)
        _say(f"openbot: {signal.Signals(signum).name} received, stopping (again to force)")
        if self.in_model_call:
            raise Interrupted(signum)

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return  # signal handlers can only be set from the main thread (e.g. under some test runners)
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # SIGHUP: the terminal or ssh went away
            self._old[s] = signal.signal(s, self._handle)

    def restore(self) -> None:
        for s, h in self._old.items():
            signal.signal(s, h)
        self._old.clear()

    @contextmanager
    def model_call(self) -> Iterator[None]:
        if self.cancel.is_set():
            raise self.cancel.interrupted()
        self.in_model_call = True
        try:
            yield
        finally:
            self.in_model_call = False


class GuardedModel:
    """Marks model calls so a first ctrl-c can abandon a streaming call at once."""

    def __init__(self, inner: ModelBackend, guard: Guard) -> None:
        self.inner = inner
        self.model = inner.model
        self.guard = guard

    def complete(self, request: ModelRequest, sink: EventSink) -> ModelReply:
        with self.guard.model_call():
            return self.inner.complete(request, sink)
