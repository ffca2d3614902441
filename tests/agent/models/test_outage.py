"""Patience with an unavailable API, on a simulated clock: backoff, retry-after, patience, the deadline."""

from __future__ import annotations

import pytest

from openbot.agent.models.base import Usage
from openbot.agent.models.outage import Outage, Patience
from openbot.errors import ModelError
from openbot.events import ListSink, Retry
from openbot.stops import LimitReached


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, secs: float) -> None:
        self.now += secs


def patience(clock: Clock, secs: float = 1800, deadline: float | None = None) -> Patience:
    return Patience(secs, deadline, clock=clock, sleep=clock.sleep)


def test_backoff_doubles_from_one_second_and_is_capped_at_a_minute() -> None:
    clock, sink = Clock(), ListSink()
    p = patience(clock)
    for _ in range(9):
        p.wait(Outage("overloaded", "HTTP 529"), sink, Usage())
    assert [e.wait_secs for e in sink.events if isinstance(e, Retry)] == [1, 2, 4, 8, 16, 32, 60, 60, 60]


def test_sixty_seconds_of_529_are_waited_out_within_the_default_patience() -> None:
    clock, sink = Clock(), ListSink()
    p = patience(clock)
    while clock.now - 1000 < 60:
        p.wait(Outage("overloaded", "HTTP 529"), sink, Usage())
    assert clock.now - 1000 >= 60  # no ModelError: thirty minutes of patience by default


def test_retry_after_is_used_as_asked() -> None:
    clock, sink = Clock(), ListSink()
    patience(clock).wait(Outage("rate limited", "HTTP 429", retry_after=17.5), sink, Usage())
    assert clock.now == 1017.5


def test_patience_spent_is_a_model_error_naming_how_long() -> None:
    clock = Clock()
    p = patience(clock, secs=100)
    with pytest.raises(ModelError, match=r"stayed overloaded for 63\.0 s over 7 attempts") as info:
        for _ in range(20):
            p.wait(Outage("overloaded", "HTTP 529"), ListSink(), Usage(input_tokens=5))
    assert clock.now - 1000 <= 100 and info.value.usage is not None


def test_a_wait_past_the_deadline_sleeps_to_the_deadline_then_stops() -> None:
    clock = Clock()
    p = patience(clock, deadline=1030.0)
    with pytest.raises(LimitReached) as info:
        p.wait(Outage("overloaded", "HTTP 529", retry_after=120), ListSink(), Usage())
    assert info.value.kind == "max_minutes" and clock.now == 1030.0


def test_a_broken_stream_is_re_sent_at_once_and_backs_off_only_when_it_breaks_again() -> None:
    clock, sink = Clock(), ListSink()
    p = patience(clock)
    for _ in range(4):
        p.wait(Outage("unavailable", "connection dropped", at_once=True), sink, Usage())
    assert [e.wait_secs for e in sink.events if isinstance(e, Retry)] == [0, 1, 2, 4]
    assert [e.attempt for e in sink.events if isinstance(e, Retry)] == [1, 2, 3, 4]


def test_an_http_error_after_an_immediate_re_send_continues_the_backoff() -> None:
    clock, sink = Clock(), ListSink()
    p = patience(clock)
    p.wait(Outage("unavailable", "cut", at_once=True), sink, Usage())
    p.wait(Outage("overloaded", "HTTP 529"), sink, Usage())
    p.wait(Outage("unavailable", "cut", at_once=True), sink, Usage())
    assert [e.wait_secs for e in sink.events if isinstance(e, Retry)] == [0, 1, 2]
    assert clock.now == 1003.0
