"""`fallback_models`: a run goes on on the next model when one is down or refuses (docs/MODELS.md).

A call goes to the first model of the chain (`model`, then each of `fallback_models`) that is not cooling
down. When that model stays unavailable for its whole `api_patience_minutes` (`ApiUnavailable`), or
refuses (`stop_reason: refusal`) while a next model exists, the same request goes to the next model at once,
with a `model_switched` notice; a refusal's reply is dropped (nothing in it ran). The last model's failure
or refusal is the run's, as without fallbacks.

A circuit breaker keeps a failing model from costing every call its patience: a model given up on is
skipped for `COOL_DOWN_SECS`; after that it is tried first again, with a single attempt (no waiting):
if that fails too, the call goes on down the chain at once and the cool-down starts over. A model that
refused is skipped for the same time, then asked again normally (the work may have moved on).

Every reply is priced by the backend that made it (`ModelReply.model`, `Usage.cost_usd`), so a run's cost
is the sum over the models it used. What is carried over on a switch is the whole conversation: each
backend sends what its protocol can take (Claude's thinking is left out for OpenAI-protocol models; an
OpenAI reasoning item is left out for Claude; a Claude thinking block another Claude model rejects is
dropped by the API's `drop_block` recovery).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from openbot.agent.models.base import ModelBackend, ModelReply, ModelRequest, Usage
from openbot.agent.models.outage import ApiUnavailable
from openbot.events import EventSink, Notice

COOL_DOWN_SECS = 900.0


@dataclass
class _Link:
    backend: ModelBackend
    open_until: float = 0.0  # the breaker: skipped until then
    failures: int = field(default=0)


class FallbackModel:
    """The chain of models as one backend; `model` is the name of the one answering now."""

    def __init__(
        self,
        chain: list[ModelBackend],
        *,
        cool_down_secs: float = COOL_DOWN_SECS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        assert chain, "a fallback chain holds at least the run's model"
        self.links = [_Link(b) for b in chain]
        self.cool_down_secs = cool_down_secs
        self.clock = clock
        self.current = 0

    @property
    def model(self) -> str:
        return self.links[self.current].backend.model

    def count_tokens(self, request: ModelRequest) -> int | None:
        count = getattr(self.links[self.current].backend, "count_tokens", None)
        result: int | None = count(request) if count is not None else None
        return result

    def complete(self, request: ModelRequest, sink: EventSink) -> ModelReply:
        order = self._order()
        spent = Usage()  # what the models given up on in this call cost
        why = "" if order[0] >= self.current else "its cool-down is over"
        if order[0] > self.current:
            why = f"{self.model} is cooling down after failing"
        for n, i in enumerate(order):
            link, last = self.links[i], n == len(order) - 1
            self._become(i, why, sink)
            try:
                reply = self._ask(link, request, sink, probe=link.failures > 0 and not last)
            except ApiUnavailable as e:
                link.failures += 1
                link.open_until = self.clock() + self.cool_down_secs
                if last:
                    raise
                spent.add(e.usage if isinstance(e.usage, Usage) else Usage())
                why = f"{link.backend.model} stayed unavailable ({e.message})"
                continue
            link.failures = 0
            if reply.stop_reason == "refusal" and not last:
                link.open_until = self.clock() + self.cool_down_secs  # the run goes on on the next
                spent.add(reply.usage)
                why = f"{link.backend.model} refused ({_refusal(reply)})"
                continue
            reply.usage = reply.usage.billed_with(spent)
            return reply
        raise AssertionError("unreachable: the last model's reply is returned, its failure raised")

    def _order(self) -> list[int]:
        """The models to try for this call: those not cooling down, in chain order; when every one is,
        the one whose cool-down ends first."""
        now = self.clock()
        ready = [i for i, link in enumerate(self.links) if link.open_until <= now]
        return ready or [min(range(len(self.links)), key=lambda i: self.links[i].open_until)]

    def _ask(self, link: _Link, request: ModelRequest, sink: EventSink, probe: bool) -> ModelReply:
        """One call; a probe of a model that failed before makes one attempt, without waiting."""
        backend: object = link.backend
        if not probe or not hasattr(backend, "max_attempts"):
            return link.backend.complete(request, sink)
        saved = backend.max_attempts
        backend.max_attempts = 1
        try:
            return link.backend.complete(request, sink)
        finally:
            backend.max_attempts = saved

    def _become(self, i: int, why: str, sink: EventSink) -> None:
        if i == self.current:
            return
        before, after = self.model, self.links[i].backend.model
        self.current = i
        sink.emit(
            Notice(
                kind="model_switched",
                message=f"going on with {after}: {why}",
                data={"from": before, "to": after, "reason": why},
            )
        )


def _refusal(reply: ModelReply) -> str:
    details = reply.stop_details or {}
    return str(details.get("explanation") or details.get("category") or "no reason given")
