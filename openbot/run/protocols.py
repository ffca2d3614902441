"""The runner's collaborators, as Protocols: what it needs of the view, the typed input and the signal
guard. The real ones are `views.live.LiveView`, `run.inbox.Inbox` and `run.signals.SignalGuard`."""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Protocol, TypeVar

from openbot.events import Event

T = TypeVar("T")


class View(Protocol):
    """Where the user watches the run: every event, a few plain lines, and the run's limits."""

    budget: dict[str, object] | None

    def emit(self, event: Event) -> None: ...

    def line(self, text: str) -> None: ...


class Input(Protocol):
    """Lines the user types while the bot works (nothing, for a headless run)."""

    @property
    def enabled(self) -> bool: ...

    def take(self) -> list[str]: ...

    def wait(self, timeout: float, cancel: threading.Event) -> list[str]: ...


class Guard(Protocol):
    """The signal handlers: a model call can be abandoned at once; saving work is waited for."""

    finishing: bool

    def model_call(self) -> AbstractContextManager[None]: ...

    def saving(self, work: Callable[[], T]) -> T: ...
