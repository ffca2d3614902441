"""The fallback chain's circuit breaker, on a clock the test moves (no waiting)."""

from __future__ import annotations

from openbot.agent.models.base import ModelReply, ModelRequest, Usage
from openbot.agent.models.fallback import FallbackModel
from openbot.agent.models.outage import ApiUnavailable
from openbot.events import ListSink, Notice


class Backend:
    """A model that is up or down as the test says, recording each call's `max_attempts`."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.up = True
        self.max_attempts = 0
        self.calls: list[int] = []

    def complete(self, request: ModelRequest, sink: object) -> ModelReply:
        self.calls.append(self.max_attempts)
        if not self.up:
            raise ApiUnavailable(f"{self.model} is down", usage=Usage(input_tokens=3))
        return ModelReply([{"type": "text", "text": "ok"}], "end_turn", Usage(input_tokens=10), self.model)


REQUEST = ModelRequest("system", [], [{"role": "user", "content": "hi"}], 100)


def test_a_dead_model_is_skipped_until_its_cool_down_ends_then_probed_once() -> None:
    now = [0.0]
    primary, fallback = Backend("a"), Backend("b")
    chain = FallbackModel([primary, fallback], cool_down_secs=100, clock=lambda: now[0])
    sink = ListSink()
    primary.up = False
    reply = chain.complete(REQUEST, sink)
    assert reply.model == "b" and reply.usage.input_tokens == 13  # the failed attempts are billed
    chain.complete(REQUEST, sink)
    assert (len(primary.calls), len(fallback.calls)) == (1, 2)  # not asked again while cooling down
    now[0] = 101
    chain.complete(REQUEST, sink)
    assert primary.calls == [0, 1]  # probed with a single attempt, then the call went on at once
    assert chain.model == "b"
    now[0] = 202
    primary.up = True
    assert chain.complete(REQUEST, sink).model == "a" and chain.model == "a"
    kinds = [e.kind for e in sink.events if isinstance(e, Notice)]
    assert kinds == ["model_switched"] * 4  # a→b, b→a (probe), a→b, b→a


def test_the_last_models_failure_is_the_runs() -> None:
    primary, fallback = Backend("a"), Backend("b")
    primary.up = fallback.up = False
    chain = FallbackModel([primary, fallback])
    try:
        chain.complete(REQUEST, ListSink())
    except ApiUnavailable as e:
        assert "b is down" in e.message
    else:
        raise AssertionError("the chain should have failed")
