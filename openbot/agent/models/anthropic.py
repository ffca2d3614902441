"""The Anthropic backend: one streamed Messages API call per step, with prompt caching and fault retries.

The SDK retries HTTP 429/5xx/529 and failed connections itself; errors after the response has started
(a cut connection, an `event: error` frame, a stream ending without `message_stop`) it never retries, so
this backend re-sends the whole request with backoff. A partial reply is discarded: only a complete
reply is returned, and the turn engine runs tools only from complete replies, so no tool runs twice.

Prompt caching uses explicit breakpoints (at most 4): the last tool, the system block, the newest
message and the user message before it, which ended the previous request, so each call reads the
previous call's prefix from the cache. The caller's messages are copied, never marked.
"""

from __future__ import annotations

import copy
import os
import time
from typing import Any

from openbot.agent.models.base import ModelReply, ModelRequest, Usage
from openbot.agent.models.pricing import cost_usd
from openbot.errors import ModelError, UsageError
from openbot.events import EventSink, Retry, TextDelta

EPHEMERAL = {"type": "ephemeral"}
KEY_VARS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
SDK_MAX_RETRIES = 2  # the SDK's default, stated so the retry budget is visible here
KEY_HINT = "check ANTHROPIC_API_KEY: it must be a valid key for this API"
UNMARKABLE = ("thinking", "redacted_thinking")


class _Transient(Exception):
    """An attempt failed in a way a re-send may fix; `kind` names it for the user."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail


class AnthropicModel:
    def __init__(
        self, model: str, *, max_attempts: int = 4, backoff_secs: float = 1.0, client: Any = None
    ) -> None:
        if client is None and not any(os.environ.get(v) for v in KEY_VARS):
            raise UsageError(
                f"ANTHROPIC_API_KEY is not set; model {model!r} needs it",
                hint='export ANTHROPIC_API_KEY=… or use model = "scripted:<path>" for an offline run',
            )
        self.model = model
        self.max_attempts = max(1, max_attempts)
        self.backoff_secs = backoff_secs
        self._client = client

    @property
    def client(self) -> Any:
        if self._client is None:
            import anthropic  # slow (~2 s): only when a call is made

            self._client = anthropic.Anthropic(max_retries=SDK_MAX_RETRIES)
        return self._client

    def complete(self, request: ModelRequest, sink: EventSink) -> ModelReply:
        params = build_params(self.model, request)
        failed = Usage()  # billed by attempts that broke mid-stream
        for attempt in range(1, self.max_attempts + 1):
            billed = Usage()
            try:
                reply = self._attempt(params, sink, billed)
            except Exception as e:
                failed.add(self._priced(billed))
                transient = self._classify(e, failed)
                if attempt == self.max_attempts:
                    raise ModelError(
                        f"the API stayed {transient.kind} after {attempt} attempts ({transient.detail})",
                        hint="the API may be down or overloaded; try again later",
                        usage=failed,
                    ) from e
                wait = self.backoff_secs * 2 ** (attempt - 1)
                sink.emit(Retry(attempt=attempt, cause=_scrub(str(transient)), wait_secs=wait))
                time.sleep(wait)
                continue
            reply.usage.add(failed)
            return reply
        raise AssertionError("unreachable")

    def _attempt(self, params: dict[str, Any], sink: EventSink, billed: Usage) -> ModelReply:
        """One streamed call; `billed` follows the usage the API reports, so a broken stream still counts."""
        with self.client.messages.stream(**params) as stream:
            # Raw events only: the stream also yields helper `text` events, which would double the text.
            for event in stream:
                if event.type == "message_start":
                    _copy_usage(event.message.usage, billed)
                elif event.type == "message_delta":
                    billed.output_tokens = event.usage.output_tokens
                elif event.type == "content_block_delta" and event.delta.type == "text_delta":
                    sink.emit(TextDelta(text=event.delta.text))
            message = stream.get_final_message()
        if message.stop_reason is None:
            raise _Transient("unavailable", "the stream ended before message_stop")
        usage = Usage()
        _copy_usage(message.usage, usage)
        return ModelReply(
            content=[b for b in (_plain_block(block) for block in message.content) if b],
            stop_reason=message.stop_reason,
            usage=self._priced(usage),
            model=message.model or self.model,
        )

    def _priced(self, usage: Usage) -> Usage:
        usage.cost_usd = cost_usd(self.model, usage)
        return usage

    def _classify(self, e: Exception, failed: Usage) -> _Transient:
        """A retryable cause, or raise ModelError at once for errors a re-send cannot fix."""
        import anthropic
        import httpx2

        if isinstance(e, _Transient):
            return e
        if isinstance(e, anthropic.APIStatusError):
            status, kind, message = e.status_code, _error_type(e), _error_message(e)
            if status in (401, 403):
                raise ModelError(
                    f"the API refused the credentials (HTTP {status} {kind}): {message}",
                    hint=KEY_HINT,
                    usage=failed,
                ) from None
            if kind == "overloaded_error" or status == 529:
                where = "mid-stream" if status == 200 else f"HTTP {status}"
                return _Transient("overloaded", f"{kind} {where}")
            if status == 429:
                return _Transient("rate limited", f"HTTP 429 {kind}: {message}")
            if status >= 500 or status in (408, 409) or status == 200:
                where = "mid-stream" if status == 200 else f"HTTP {status}"
                return _Transient("unavailable", f"server error {where} {kind}: {message}")
            raise ModelError(
                f"the API rejected the request (HTTP {status} {kind}): {message}", usage=failed
            ) from None
        if isinstance(e, anthropic.APITimeoutError | httpx2.TimeoutException):
            return _Transient("unavailable", "timed out waiting for the API")
        if isinstance(e, anthropic.APIConnectionError | httpx2.TransportError):
            return _Transient("unavailable", f"connection dropped ({type(e).__name__}: {_scrub(str(e))})")
        raise e


def build_params(model: str, request: ModelRequest) -> dict[str, Any]:
    """The `messages.stream` kwargs for `request`, with cache breakpoints on copies of its data."""
    params: dict[str, Any] = {"model": model, "max_tokens": request.max_tokens}
    if request.tools:
        tools = [t.to_api() for t in request.tools]
        tools[-1] = {**tools[-1], "cache_control": dict(EPHEMERAL)}
        params["tools"] = tools
    if request.system:
        params["system"] = [{"type": "text", "text": request.system, "cache_control": dict(EPHEMERAL)}]
    params["messages"] = marked_messages(request.messages)
    return params


def marked_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A deep copy with block-list content and breakpoints on the newest message and the user message
    before it; any other marker is dropped, so the request never carries more than 4."""
    out = copy.deepcopy(messages)
    for msg in out:
        content = msg.get("content")
        if isinstance(content, str):
            # Always blocks, never a bare string: the cached prefix must be byte-stable across calls.
            msg["content"] = [{"type": "text", "text": content}]
        elif isinstance(content, list):
            for block in content:
                if isinstance(block, dict):
                    block.pop("cache_control", None)
    if not out:
        return out
    newest = len(out) - 1
    previous_user = next((i for i in range(newest - 1, -1, -1) if out[i].get("role") == "user"), None)
    for i in (newest, previous_user):
        if i is not None:
            _mark_last_block(out[i])
    return out


def _mark_last_block(msg: dict[str, Any]) -> None:
    blocks = [b for b in msg.get("content") or [] if isinstance(b, dict) and b.get("type") not in UNMARKABLE]
    if blocks and not (blocks[-1].get("type") == "text" and not blocks[-1].get("text")):
        blocks[-1]["cache_control"] = dict(EPHEMERAL)


def _plain_block(block: Any) -> dict[str, Any] | None:
    """An SDK content block as the plain dict the conversation stores (None for an empty text block)."""
    if block.type == "text":
        return {"type": "text", "text": block.text} if block.text else None
    if block.type == "tool_use":
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    if block.type == "thinking":  # must be sent back unchanged in a tool-use loop
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
    if block.type == "redacted_thinking":
        return {"type": "redacted_thinking", "data": block.data}
    return dict(block.model_dump(mode="json", exclude_none=True))


def _copy_usage(api_usage: Any, usage: Usage) -> None:
    usage.input_tokens = api_usage.input_tokens or 0
    usage.output_tokens = api_usage.output_tokens or 0
    usage.cache_read_tokens = api_usage.cache_read_input_tokens or 0
    usage.cache_write_tokens = api_usage.cache_creation_input_tokens or 0


def _error_body(e: Any) -> dict[str, Any]:
    """The `error` object of the API's `{"type": "error", "error": {...}}` body, or {}."""
    error = e.body.get("error") if isinstance(e.body, dict) else None
    return error if isinstance(error, dict) else {}


def _error_type(e: Any) -> str:
    return str(_error_body(e).get("type") or getattr(e, "type", None) or "error")


def _error_message(e: Any) -> str:
    return _scrub(str(_error_body(e).get("message") or e.message))


def _scrub(text: str) -> str:
    """Belt and braces: no error text we pass on may carry the key."""
    for var in KEY_VARS:
        secret = os.environ.get(var)
        if secret and len(secret) >= 8:
            text = text.replace(secret, "[redacted]")
    return text
