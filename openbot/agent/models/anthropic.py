"""The Anthropic backend: one streamed Messages API call per step, with prompt caching and patience.

openbot does every retry itself (the SDK's own retries are off), so each wait honours `retry-after(-ms)`
and `x-should-retry`, is an event, and fits the run's budgets (see `outage`). Errors after the
response has started (a cut connection, an `event: error` frame, a stream ending without
`message_stop`, silence longer than the read timeout) re-send the whole request, at once the first time.
A partial reply is discarded: only a complete reply is returned, so no tool runs twice or from half a
reply.

Stop reasons (docs: "Stop reasons and fallback"): a reply cut at `max_tokens` (or by the context window)
that holds a tool call or nothing usable is asked again with twice the output limit, up to the model's
maximum, with a `Notice`; whatever is still cut is returned as `truncated` for the turn to handle.
`refusal` comes back with its `stop_details`; tool input that is not JSON comes back as a `defect`.
"""

from __future__ import annotations

import os
import re
import threading
from typing import Any

from openbot.agent.models.anthropic_wire import bad_tool_json, copy_usage, plain_block
from openbot.agent.models.base import (
    TRUNCATED,
    ModelOptions,
    ModelReply,
    ModelRequest,
    PromptTooLong,
    Usage,
    with_room,
)
from openbot.agent.models.outage import Outage, Patience, retry_after
from openbot.agent.models.params import build_params
from openbot.agent.models.pricing import price_usage
from openbot.errors import ModelError, UsageError
from openbot.events import EventSink, TextDelta

KEY_VARS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
KEY_HINT = "check ANTHROPIC_API_KEY: it must be a valid key for this API"
OUTPUT_CEILING = 128_000  # the largest max_tokens a retry asks for, unless the model allows less
TOO_LONG = re.compile(r"prompt is too long: (\d+) tokens > (\d+) maximum")
BAD_TOOL_JSON = "Unable to parse tool parameter JSON"


class AnthropicModel:
    def __init__(
        self,
        model: str,
        *,
        options: ModelOptions | None = None,
        max_attempts: int = 0,
        backoff_secs: float = 1.0,
        client: Any = None,
        max_output_tokens: int = OUTPUT_CEILING,
    ) -> None:
        if client is None and not any(os.environ.get(v) for v in KEY_VARS):
            raise UsageError(
                f"ANTHROPIC_API_KEY is not set; model {model!r} needs it",
                hint='export ANTHROPIC_API_KEY=… or use model = "scripted:<path>" for an offline run',
            )
        self.model = model
        self.options = options or ModelOptions()
        self.max_attempts = max_attempts  # 0: only patience and the budgets limit the attempts
        self.backoff_secs = backoff_secs
        self.output_ceiling = max_output_tokens  # the model's own maximum (Models API), when known
        self._client = client
        self._warming: threading.Thread | None = None

    def prepare(self) -> None:
        """Import the SDK and build its client on a thread of their own, while the caller prepares the
        run (worktree, sandbox, prompt): `import anthropic` alone takes 1–2 s. The first call waits for
        it; should it fail there, the first call fails the same way in its own thread."""
        if self._client is None and self._warming is None:
            self._warming = threading.Thread(target=self._warm, name="openbot-sdk", daemon=True)
            self._warming.start()

    def _warm(self) -> None:
        try:
            self._new_client()
        except Exception:  # noqa: BLE001 (raised again where the client is first used)
            pass

    def _new_client(self) -> Any:
        if self._client is None:
            import gc

            import anthropic  # slow (~2 s): only in runs that call the API

            self._client = anthropic.Anthropic(max_retries=0)
            # The SDK's ~3,300 modules and their objects live as long as the process: out of the cyclic
            # collector's reach, its full collections stop walking them on every round trip of a long run.
            gc.freeze()
        return self._client

    @property
    def client(self) -> Any:
        if self._warming is not None:
            self._warming.join()
            self._warming = None
        return self._new_client()

    def complete(self, request: ModelRequest, sink: EventSink) -> ModelReply:
        """The reply to `request`; a truncated reply holding a tool call is asked again with more room."""
        limit = min(request.max_tokens, self.output_ceiling)
        return with_room(
            lambda room: self._complete_once(request, room, sink), limit, self.output_ceiling, sink
        )

    def count_tokens(self, request: ModelRequest) -> int | None:
        """The API's own count of `request`'s prompt (`messages.count_tokens`, free of charge), or None
        when it cannot be had now (the estimate then stands)."""
        import anthropic

        params = build_params(self.model, request, self.options)
        keys = ("model", "messages", "system", "tools", "thinking", "output_config", "context_management")
        kwargs = {k: params[k] for k in keys if k in params}
        api = self.client.messages
        if "betas" in params:
            api, kwargs["betas"] = self.client.beta.messages, params["betas"]
        try:
            return int(api.count_tokens(**kwargs, timeout=30).input_tokens)
        except (anthropic.AnthropicError, ValueError):
            return None

    def _complete_once(self, request: ModelRequest, max_tokens: int, sink: EventSink) -> ModelReply:
        request = ModelRequest(request.system, request.tools, request.messages, max_tokens, request.deadline)
        params = build_params(self.model, request, self.options)
        failed = Usage()  # billed by attempts that broke mid-stream
        patience = Patience(
            self.options.patience_secs,
            request.deadline,
            max_attempts=self.max_attempts,
            backoff_secs=self.backoff_secs,
        )
        while True:
            billed = Usage()
            try:
                reply = self._attempt(params, sink, billed, patience)
            except Exception as e:
                failed.add(self._priced(billed))
                patience.wait(self._classify(e, failed), sink, failed)
                continue
            reply.usage = reply.usage.billed_with(failed)
            return reply

    def _attempt(
        self, params: dict[str, Any], sink: EventSink, billed: Usage, patience: Patience
    ) -> ModelReply:
        """One streamed call; `billed` follows the usage the API reports, so a broken stream still counts."""
        left = patience.remaining()
        timeout = (
            self.options.read_timeout_secs if left is None else min(self.options.read_timeout_secs, left)
        )
        tool_json: dict[int, str] = {}  # each tool call's input as streamed, checked strictly at the end
        try:
            # A beta (server-side compaction) goes through the SDK's beta namespace, which sends the header.
            api = self.client.beta.messages if "betas" in params else self.client.messages
            with api.stream(**params, timeout=timeout) as stream:
                # Raw events only: the stream also yields helper `text` events, which would double the text.
                for event in stream:
                    if event.type == "message_start":
                        copy_usage(event.message.usage, billed)
                    elif event.type == "message_delta":
                        billed.output_tokens = event.usage.output_tokens
                    elif event.type == "content_block_delta" and event.delta.type == "text_delta":
                        sink.emit(TextDelta(text=event.delta.text))
                    elif event.type == "content_block_delta" and event.delta.type == "input_json_delta":
                        tool_json[event.index] = tool_json.get(event.index, "") + event.delta.partial_json
                    patience.remaining()  # a trickling stream does not outlive the wall-time budget
                message = stream.get_final_message()
        except ValueError as e:  # the SDK could not parse the model's tool input: the model's fault
            if BAD_TOOL_JSON not in str(e):
                raise
            return self._defect(billed, f"a tool call's input is not valid JSON: {e}")
        if message.stop_reason is None:
            raise Outage("unavailable", "the stream ended before message_stop", at_once=True)
        bad = bad_tool_json(tool_json)
        if bad and message.stop_reason not in TRUNCATED:  # a cut input is the truncation's, handled there
            return self._defect(billed, f"a tool call's input is not valid JSON: {bad}")
        usage = Usage()
        copy_usage(message.usage, usage)
        details = message.stop_details.model_dump(mode="json") if message.stop_details else None
        return ModelReply(
            content=[b for b in (plain_block(block) for block in message.content) if b],
            stop_reason=message.stop_reason,
            usage=self._priced(usage),
            model=message.model or self.model,
            stop_details=details,
        )

    def _defect(self, billed: Usage, why: str) -> ModelReply:
        return ModelReply([], "tool_use", self._priced(billed), self.model, defect=_scrub(why)[:500])

    def _priced(self, usage: Usage) -> Usage:
        return price_usage(self.model, usage)

    def _classify(self, e: Exception, failed: Usage) -> Outage:
        """A retryable cause, or raise ModelError at once for errors a re-send cannot fix."""
        import anthropic
        import httpx2

        if isinstance(e, Outage):
            return e
        if isinstance(e, anthropic.APIStatusError):
            return _classify_status(e, failed)
        if isinstance(e, anthropic.APITimeoutError | httpx2.TimeoutException):
            return Outage(
                "unavailable", "no data from the API within the read timeout (a stalled stream)", at_once=True
            )
        if isinstance(e, anthropic.APIConnectionError | httpx2.TransportError):
            return Outage(
                "unavailable", f"connection dropped ({type(e).__name__}: {_scrub(str(e))})", at_once=True
            )
        raise e


def _classify_status(e: Any, failed: Usage) -> Outage:
    status, kind, message = e.status_code, _error_type(e), _error_message(e)
    headers = getattr(getattr(e, "response", None), "headers", None)
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
