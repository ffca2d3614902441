"""ctrl-c, SIGTERM and SIGHUP (a closed terminal or ssh session) during a run: the first one stops the
work cleanly, a second one exits at once.

The first signal sets the cancel event (the shell tool kills its process group, the turn and the sleep
end) and, while a model call is in flight, raises `Interrupted` to abandon it. A second signal exits
immediately — except while the run is saving its work (`finishing`), when it waits for that and only
a third one exits; a worktree left that way is recovered as a WIP commit by the next run's sweep.

openbot's own long git work (the WIP commit) runs through `SignalGuard.saving`, in a worker thread, so
that the main thread keeps handling signals (a signal handler cannot run while libgit2 holds the main
thread): a signal that arrives meanwhile gives it `SAVE_GRACE_SECS` to finish, after which it is
abandoned — as safe as a SIGKILL, which the next run's sweep recovers from — and the run ends 130/143.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any, TypeVar

from openbot.agent.models.base import ModelBackend, ModelReply, ModelRequest
from openbot.events import EventSink
from openbot.run.protocols import Guard
from openbot.stops import Cancel, Interrupted

_Handler = Callable[[int, FrameType | None], object] | int | signal.Handlers | None

T = TypeVar("T")
SAVE_GRACE_SECS = 1.2  # with the record written after it, a signal is honoured within ~2 s


class SaveAbandoned(BaseException):
    """A signal came while openbot saved the work, and the saving did not finish within the grace time."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"{signal.Signals(signum).name} while saving the work")
        self.signum = signum


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
                _say(
                    f"openbot: saving the bot's work (WIP commit): {SAVE_GRACE_SECS:g} s more at most, "
                    "then the next run recovers it; signal again to exit now"
                )
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

    def saving(self, work: Callable[[], T], grace: float = SAVE_GRACE_SECS) -> T:
        """Run `work` (openbot's own git work) so that a signal arriving meanwhile is honoured: it gets
        `grace` seconds more to finish, else SaveAbandoned (the thread is left to die with the process)."""
        box: dict[str, Any] = {}

        def run() -> None:
            try:
                box["value"] = work()
            except BaseException as e:  # handed to the main thread, which decides
                box["error"] = e

        seen = self.count
        worker = threading.Thread(target=run, name="openbot-save", daemon=True)
        worker.start()
        deadline: float | None = None
        while worker.is_alive():
            worker.join(0.05)  # signal handlers run between these waits
            if deadline is None and self.count > seen:
                deadline = time.monotonic() + grace
            if deadline is not None and worker.is_alive() and time.monotonic() >= deadline:
                raise SaveAbandoned(self.cancel.signum or signal.SIGINT)
        if "error" in box:
            raise box["error"]
        return box["value"]  # type: ignore[no-any-return]

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
    """Marks model calls so a first ctrl-c can abandon a streaming call at once; `after_first_reply` runs
    once the first reply is in (work for the run's end, kept off its first request)."""

    def __init__(
        self, inner: ModelBackend, guard: Guard, after_first_reply: Callable[[], None] | None = None
    ) -> None:
        self.inner = inner
        self.guard = guard
        self.after_first_reply = after_first_reply

    @property
    def model(self) -> str:  # the model answering now (a fallback chain switches)
        return self.inner.model

    def complete(self, request: ModelRequest, sink: EventSink) -> ModelReply:
        with self.guard.model_call():
            reply = self.inner.complete(request, sink)
        if self.after_first_reply is not None:
            after, self.after_first_reply = self.after_first_reply, None
            after()
        return reply

    def count_tokens(self, request: ModelRequest) -> int | None:
        """The backend's own count of the prompt, where it can give one (optional for backends)."""
        count = getattr(self.inner, "count_tokens", None)
        if count is None:
            return None
        with self.guard.model_call():
            result: int | None = count(request)
            return result
