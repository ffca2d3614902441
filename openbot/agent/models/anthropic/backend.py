"""The Anthropic backend: one streamed Messages API call per step, with prompt caching and patience.

The wire is spoken by `http` (not the SDK: see there why). openbot does every retry itself, so
each wait honours `retry-after(-ms)`
and `x-should-retry`, is an event, and fits the run's budgets (see `outage`). Errors after the
response has started (a cut connection, an `event: error` frame, a stream ending without
`message_stop`, silence longer than the read timeout, or only `ping`s for that long: a keep-alive is
liveness, not progress) re-send the whole request, at once the first time. The wall-time budget is
checked on every frame, pings included.
A partial reply is discarded: only a complete reply is returned, so no tool runs twice or from half a
reply.

Stop reasons (docs: "Stop reasons and fallback"): a reply cut at `max_tokens` (or by the context window)
that holds a tool call or nothing usable is asked again with twice the output limit, up to the model's
maximum, with a `Notice`; whatever is still cut is returned as `truncated` for the turn to handle.
`refusal` comes back with its `stop_details`; tool input that is not JSON comes back as a `defect`.
A 400 a changed request fixes (a thinking block bound to another prefix, no room for `max_tokens`) is
re-sent changed (recover.py).
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from typing import Any

from openbot.agent.models.anthropic.http import (
    KEY_VARS,
    PING,
    ApiError,
    BrokenStream,
    Connection,
    api_key,
    reach_hint,
    shared,
)
from openbot.agent.models.anthropic.recover import Fixes, applied, fixable
from openbot.agent.models.anthropic.wire import Accumulator, copy_usage, plain_block
from openbot.agent.models.base import (
    TRUNCATED,
    ModelOptions,
    ModelReply,
    ModelRequest,
    PromptTooLong,
    Usage,
    with_room,
)
from openbot.agent.models.direct import Stalled, TransportFailure
from openbot.agent.models.outage import (
    Outage,
    Patience,
    Watch,
    retry_after,
    unresolved,
    with_patience,
)
from openbot.agent.models.params import Prepared, build_params
from openbot.agent.models.pricing import price_usage
from openbot.errors import ModelError, UsageError
from openbot.events import EventSink, Notice, TextDelta

KEY_HINT = "check ANTHROPIC_API_KEY: it must be a valid key for this API"
OUTPUT_CEILING = 128_000  # the largest max_tokens a retry asks for, unless the model allows less
TOO_LONG = re.compile(r"prompt is too long: (\d+) tokens > (\d+) maximum")


def require_key(model: str) -> str:
    """The API key; UsageError (exit 2) when none is set."""
    key = api_key()
    if not key:
        raise UsageError(
            f"ANTHROPIC_API_KEY is not set; model {model!r} needs it",
            hint='export ANTHROPIC_API_KEY=… or use model = "scripted:<path>" for an offline run',
        )
    return key


class AnthropicModel:
    def __init__(
        self,
        model: str,
        *,
        options: ModelOptions | None = None,
        max_attempts: int = 0,
        backoff_secs: float = 1.0,
        client: Connection | None = None,
        max_output_tokens: int = OUTPUT_CEILING,
    ) -> None:
        if client is None:
            require_key(model)
        self.model = model
        self.options = options or ModelOptions()
        self.max_attempts = max_attempts  # 0: only patience and the budgets limit the attempts
        self.backoff_secs = backoff_secs
        self.output_ceiling = max_output_tokens  # the model's own maximum (Models API), when known
        self._client = client
        self.fixes = Fixes()  # what 400s the request could fix changed (recover.py)
        self.prepared = Prepared()  # the conversation as sent, kept from call to call

    @property
    def client(self) -> Connection:
        if self._client is None:
            self._client = shared(api_key())
        return self._client

    def complete(self, request: ModelRequest, sink: EventSink) -> ModelReply:
        """The reply to `request`; a truncated reply holding a tool call is asked again with more room."""
        limit = min(request.max_tokens, self.output_ceiling)
        return with_room(
            lambda room: self._complete_once(request, room, sink), limit, self.output_ceiling, sink
        )

    def count_tokens(self, request: ModelRequest) -> int | None:
        """The API's own count of `request`'s prompt (`messages/count_tokens`, free of charge), or None
        when it cannot be had now (the estimate then stands)."""
        params = self._params(request)
        keys = ("model", "messages", "system", "tools", "thinking", "output_config", "context_management")
        body = {k: params[k] for k in keys if k in params}
        try:
            answer = self.client.call(
                "POST", "/v1/messages/count_tokens", body, timeout=30, betas=_betas(params)
            )
            return int(answer["input_tokens"])
        except (ApiError, TransportFailure, ValueError, KeyError, TypeError):
            return None

    def _complete_once(self, request: ModelRequest, max_tokens: int, sink: EventSink) -> ModelReply:
        request = ModelRequest(request.system, request.tools, request.messages, max_tokens, request.deadline)
        self.fixes.max_tokens = None
        patience = Patience(
            self.options.patience_secs,
            request.deadline,
            max_attempts=self.max_attempts,
            backoff_secs=self.backoff_secs,
        )
        return with_patience(
            lambda billed: self._attempt(self._params(request), sink, billed, patience),
            self._classify,
            self._priced,
            patience,
            sink,
        )

    def _params(self, request: ModelRequest) -> dict[str, object]:
        """The request's params, built afresh for each attempt with the fixes in force (recover.py)."""
        room = self.fixes.max_tokens
        if room is not None and request.max_tokens > room:
            request = replace(request, max_tokens=room)
        return applied(build_params(self.model, request, self.options, self.prepared), self.fixes)

    def _attempt(
        self, params: dict[str, object], sink: EventSink, billed: Usage, patience: Patience
    ) -> ModelReply:
        """One streamed call; `billed` follows the usage the API reports, so a broken stream still counts."""
        left = patience.remaining()
        read = max(self.options.read_timeout_secs, self.options.first_token_secs)  # first_token: 0 = auto
        timeout = read if left is None else min(read, left)
        body = {k: v for k, v in params.items() if k != "betas"}
        body["stream"] = True
        reply = Accumulator()
        watch = Watch(patience, timeout)
        for event in self.client.stream("/v1/messages", body, timeout=timeout, betas=_betas(params)):
            watch.frame(progress=event is not PING)  # budgets hold on pings too; they are not progress
            if event is PING:
                continue
            try:
                reply.add(event)
            except (KeyError, IndexError, TypeError, ValueError) as e:
                raise BrokenStream(f"an event out of shape or order ({e!r}): {str(event)[:200]}") from None
            kind = event.get("type")
            if kind == "message_start":
                copy_usage(event["message"].get("usage") or {}, billed)
            elif kind == "message_delta":
                billed.output_tokens = (event.get("usage") or {}).get("output_tokens") or 0
            elif kind == "content_block_delta" and event["delta"].get("type") == "text_delta":
                sink.emit(TextDelta(text=event["delta"]["text"]))
        if reply.message is None or reply.message.get("stop_reason") is None:
            raise Outage("unavailable", "the stream ended before message_stop", at_once=True)
        message, bad = reply.finish(truncated=reply.message["stop_reason"] in TRUNCATED)
        if bad:  # a cut input is the truncation's, handled there
            return self._defect(billed, f"a tool call's input is not valid JSON: {bad}")
        usage = Usage()
        copy_usage(message["usage"], usage)
        self._dropped(message.get("input_transformations"), sink)
        return ModelReply(
            content=[plain_block(block) for block in message["content"]],
            stop_reason=message["stop_reason"],
            usage=self._priced(usage),
            model=message.get("model") or self.model,
            stop_details=message.get("stop_details") or None,
        )

    def _dropped(self, transformations: object, sink: EventSink) -> None:
        """Say once what the API dropped under `drop_block` (again only when that changes)."""
        if not isinstance(transformations, list) or len(transformations) == self.fixes.dropped_seen:
            return
        self.fixes.dropped_seen = len(transformations)
        message = f"the API dropped {len(transformations)} thinking block(s) bound to an earlier prefix"
        sink.emit(Notice(kind="thinking_dropped", message=message, data={"dropped": transformations}))

    def _defect(self, billed: Usage, why: str) -> ModelReply:
        return ModelReply([], "tool_use", self._priced(billed), self.model, defect=_scrub(why)[:500])

    def _priced(self, usage: Usage) -> Usage:
        return price_usage(self.model, usage)

    def _classify(self, e: Exception, failed: Usage) -> Outage:
        """A retryable cause, or raise ModelError at once for errors a re-send cannot fix."""
        if isinstance(e, Outage):
            return e
        if isinstance(e, ApiError):
            fix = fixable(e.status_code, e.message, self.fixes, failed)
            return fix or _classify_status(e, failed)
        if isinstance(e, Stalled):
            return Outage(
                "unavailable", "no data from the API within the read timeout (a stalled stream)", at_once=True
            )
        dns = unresolved(e, self.client.base_url, reach_hint(self.client.base_url))
        if dns is not None:
            return dns
        if isinstance(e, TransportFailure | BrokenStream):
            name = (
                "" if isinstance(e, TransportFailure) else f"{type(e).__name__}: "
            )  # its text names its kind
            return Outage("unavailable", f"connection dropped ({name}{_scrub(str(e))})", at_once=True)
        raise e


def _betas(params: dict[str, Any]) -> list[str]:
    return list(params.get("betas") or [])


def _classify_status(e: ApiError, failed: Usage) -> Outage:
    status, kind, message, headers = e.status_code, e.type, _scrub(e.message), e.headers
    should_retry = headers.get("x-should-retry") if headers is not None else None
    too_long = TOO_LONG.search(message)
    if status == 400 and too_long:
        raise PromptTooLong(
            f"the API rejected the request: {message}", int(too_long[1]), int(too_long[2]), usage=failed
        ) from None
    if status in (401, 403):
        raise ModelError(
            f"the API refused the credentials (HTTP {status} {kind}): {message}", hint=KEY_HINT, usage=failed
        ) from None
    where = "mid-stream" if status == 200 else f"HTTP {status}"
    transient = status >= 500 or status in (408, 409, 429) or status == 200 or kind == "overloaded_error"
    if should_retry == "false" or not (transient or should_retry == "true"):
        why = " (the API said not to retry)" if transient else ""
        raise ModelError(
            f"the API rejected the request ({where} {kind}): {message}{why}", usage=failed
        ) from None
    wait = retry_after(headers)
    broken = status == 200  # an `event: error` frame in an accepted stream
    if kind == "overloaded_error" or status == 529:
        return Outage("overloaded", f"{kind} {where}", wait, at_once=broken)
    if status == 429:
        return Outage("rate limited", f"HTTP 429 {kind}: {message}", wait)
    return Outage("unavailable", f"server error {where} {kind}: {message}", wait, at_once=broken)


def _scrub(text: str) -> str:
    """Belt and braces: no error text we pass on may carry the key."""
    for var in KEY_VARS:
        secret = os.environ.get(var)
        if secret and len(secret) >= 8:
            text = text.replace(secret, "[redacted]")
    return text
