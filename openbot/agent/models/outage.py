"""Waiting out an unavailable API within the run's budgets.

Every failure a re-send may fix (429, 529, 5xx, 408/409, a cut or stalled stream, an `event: error`
frame, a stream without `message_stop`) is an `Outage`. A broken stream (`at_once`: the request was
accepted, then the connection or the stream failed) is re-sent at once the first time, as a one-off
network fault usually is; otherwise `Patience` waits between attempts with capped exponential backoff
(1 s, 2 s, 4 s … 60 s), or exactly what the API asked for in `retry-after-ms` / `retry-after`, for up to
`patience_secs` since the first failure of this call; every retry is a `Retry` event with its wait
(0 for an immediate re-send), shown in the live view. `x-should-retry: false` is obeyed at once. Waits
never pass the wall-time budget: at the deadline the run stops with `LimitReached` (exit 3), whatever
the API does. A host name that does not resolve (`unresolved`) is not waited out for the whole patience:
it is a wrong URL or no network, said as such after `DNS_ATTEMPTS` attempts with the setting to check.
"""

from __future__ import annotations

import datetime
import email.utils
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from openbot.agent.models.base import ModelReply, Usage
from openbot.errors import ModelError
from openbot.events import EventSink, Retry
from openbot.stops import LimitReached

BACKOFF_BASE_SECS = 1.0
BACKOFF_CAP_SECS = 60.0
RETRY_AFTER_CAP_SECS = 600.0  # a larger ask is taken as this (and patience decides)
DNS_ATTEMPTS = 4  # a resolver blip passes within the backoff's first 7 s; a wrong host never does


@dataclass
class Outage(Exception):
    """An attempt failed in a way a re-send may fix; `kind` names it for the user."""

    kind: str
    detail: str
    retry_after: float | None = None  # seconds the API asked for
    at_once: bool = False  # a broken stream: the first re-send of the call goes at once, repeats back off
    attempts: int = 0  # at most this many attempts of the call in this state (0: patience decides)
    hint: str = ""  # what to check when the call is given up in this state

    def __str__(self) -> str:
        return f"{self.kind}: {self.detail}"


class ApiUnavailable(ModelError):
    """The API stayed unavailable for the whole patience (or its attempts): the run's model is down
    (`fallback_models` go on from here)."""


def retry_after(headers: object) -> float | None:
    """Seconds from `retry-after-ms` (preferred, precise) or `retry-after` (seconds or an HTTP date), as
    the SDK reads them: a value of 0 or less is no ask at all (the backoff applies), never a hot loop."""
    get = getattr(headers, "get", None)
    if get is None:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        raw = get(name)
        try:
            value = float(raw) * scale
        except (TypeError, ValueError):
            value = _seconds_until(raw) if name == "retry-after" else 0.0
        if value > 0:
            return min(value, RETRY_AFTER_CAP_SECS)
    return None


def _seconds_until(http_date: object) -> float:
    if not isinstance(http_date, str):
        return 0.0
    try:
        when = email.utils.parsedate_to_datetime(http_date)
    except (TypeError, ValueError, IndexError):
        return 0.0
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.UTC)
    return (when - datetime.datetime.now(datetime.UTC)).total_seconds()


def unresolved(e: BaseException, url: str, hint: str) -> Outage | None:
    """`e` as a bounded `Outage` when, somewhere in its causes, the host name of `url` did not resolve
    (`socket.gaierror`: "Name or service not known", "Temporary failure in name resolution"), else None."""
    cause: BaseException | None = e
    while cause is not None:
        if isinstance(cause, socket.gaierror):
            host = urlsplit(url).hostname or url
            why = cause.strerror or str(cause)
            detail = f"host {host} does not resolve: {why}"
            return Outage("unreachable", detail, attempts=DNS_ATTEMPTS, hint=hint)
        cause = cause.__cause__ or cause.__context__
    return None


def deadline_stop() -> LimitReached:
    return LimitReached("max_minutes", "time limit reached while waiting for the API (max_minutes)")


class Patience:
    """The waits of one model call. `clock` and `sleep` are injectable so backoff is testable exactly."""

    def __init__(
        self,
        patience_secs: float,
        deadline: float | None,
        *,
        max_attempts: int = 0,
        backoff_secs: float = BACKOFF_BASE_SECS,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.patience_secs = patience_secs
        self.deadline = deadline
        self.max_attempts = max_attempts
        self.backoff_secs = backoff_secs
        self.clock, self.sleep = clock, sleep
        self.first_failure: float | None = None
        self.attempt = 0
        self.backoffs = 0  # waits that followed the backoff schedule (an immediate re-send is not one)
        self.resent_at_once = False

    def remaining(self) -> float | None:
        """Seconds left before the wall-time budget (None: no budget). Raises once it has run out."""
        if self.deadline is None:
            return None
        left = self.deadline - self.clock()
        if left <= 0:
            raise deadline_stop()
        return left

    def wait(self, outage: Outage, sink: EventSink, billed: Usage) -> None:
        """Wait before the next attempt, or raise ModelError (patience spent) / LimitReached (deadline)."""
        self.attempt += 1
        now = self.clock()
        if self.first_failure is None:
            self.first_failure = now
        wait = self._next_wait(outage)
        waited = now - self.first_failure
        limits = [n for n in (self.max_attempts, outage.attempts) if n]
        out_of_attempts = any(self.attempt >= n for n in limits)
        if out_of_attempts or waited + wait > self.patience_secs:
            raise ApiUnavailable(
                f"the API stayed {outage.kind} for {_duration(waited)} over {self.attempt} attempts "
                f"({outage.detail})",
                hint=outage.hint
                or "the API may be down or overloaded; resume the run later, or raise api_patience_minutes",
                usage=billed,
            )
        left = self.remaining()
        sink.emit(Retry(attempt=self.attempt, cause=str(outage), wait_secs=round(wait, 3)))
        if left is not None and wait >= left:
            self.sleep(left)
            raise deadline_stop()
        if wait > 0:
            self.sleep(wait)

    def _next_wait(self, outage: Outage) -> float:
        if outage.retry_after is not None:
            return outage.retry_after
        if outage.at_once and not self.resent_at_once:
            self.resent_at_once = True
            return 0.0
        self.backoffs += 1
        return min(BACKOFF_CAP_SECS, self.backoff_secs * 2.0 ** (self.backoffs - 1))


class Watch:
    """The budgets held on every frame of one stream, keep-alives included. A keep-alive (`ping`, an SSE
    comment) is liveness, not progress: a stream that carries nothing else for `stall_secs` is a stall,
    however many it carries, and the wall-time budget is checked on each (it raises at the deadline)."""

    def __init__(self, patience: Patience, stall_secs: float) -> None:
        self.patience = patience
        self.stall_secs = stall_secs
        self.last_progress = patience.clock()

    def frame(self, progress: bool) -> None:
        self.patience.remaining()
        now = self.patience.clock()
        if progress:
            self.last_progress = now
        elif now - self.last_progress > self.stall_secs:
            raise Outage(
                "unavailable",
                f"only keep-alives for {_duration(now - self.last_progress)} (a stalled stream)",
                at_once=True,
            )


def with_patience(
    attempt: Callable[[Usage], ModelReply],
    classify: Callable[[Exception, Usage], Outage],
    priced: Callable[[Usage], Usage],
    patience: Patience,
    sink: EventSink,
) -> ModelReply:
    """One model call made until it succeeds: `attempt(billed)` tries once (keeping in `billed` what the
    API reports, so a broken stream still counts); a failure `classify` calls retryable is waited out by
    `patience`. The reply's usage includes what the failed attempts cost."""
    failed = Usage()
    while True:
        billed = Usage()
        try:
            reply = attempt(billed)
        except Exception as e:
            failed.add(priced(billed))
            patience.wait(classify(e, failed), sink, failed)
            continue
        reply.usage = reply.usage.billed_with(failed)
        return reply


def _duration(secs: float) -> str:
    return f"{secs:.1f} s" if secs < 120 else f"{secs / 60:.1f} min"
