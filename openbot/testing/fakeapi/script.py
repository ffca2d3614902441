"""What a FakeAnthropic script is made of: replies (with thinking, refusals, cuts) and HTTP errors.

Wire shapes follow the installed SDK's types (anthropic 2.12: `types/message.py`, `refusal_stop_details.py`,
`thinking_block.py`, `signature_delta.py`, `raw_message_delta_event.py`) and the Messages API docs
("Stop reasons and fallback", "Streaming refusals", "Errors").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    503: "api_error",
    529: "overloaded_error",
}


@dataclass
class Reply:
    """One assistant message; `fail` makes it break after `fail_after` stream events.

    `thinking` prepends a thinking block whose signature the server binds to the request's prefix
    (system, tools, earlier messages), and checks when the block comes back. `partial_json` sends the
    last tool_use's input as exactly that text (a cut or invalid JSON), as a model's stream would."""

    content: list[dict[str, Any]]
    stop_reason: str = ""
    usage: dict[str, int] | None = None
    fail: str = ""  # "" | error_event | cut | stall | truncate | pings
    fail_after: int = 3
    ping_every: float = 0.05  # "pings": seconds between `ping` events, sent for `stall_secs`, then a cut
    error_type: str = "overloaded_error"
    stall_secs: float = 5.0
    thinking: str = ""
    stop_details: dict[str, object] | None = None
    partial_json: str | None = None


@dataclass
class HttpError:
    status: int
    type: str
    message: str
    headers: dict[str, str] = field(default_factory=lambda: {"retry-after-ms": "1"})


def reply(
    text: str = "",
    tool_calls: list[dict[str, object]] | None = None,
    *,
    usage: dict[str, int] | None = None,
    stop_reason: str = "",
    thinking: str = "",
) -> Reply:
    """A reply of a text block and tool_use blocks (`{"name", "input", "id"?}`), after a thinking block
    when `thinking` is given."""
    blocks: list[dict[str, object]] = [{"type": "text", "text": text}] if text else []
    for n, call in enumerate(tool_calls or []):
        blocks.append(
            {
                "type": "tool_use",
                "id": call.get("id", f"toolu_fake_{n}"),
                "name": call["name"],
                "input": call.get("input", {}),
            }
        )
    return Reply(blocks, stop_reason, usage, thinking=thinking)


def thinking_only(thinking: str = "Let me think about this.", stop_reason: str = "end_turn") -> Reply:
    """A reply spent entirely on thinking: no text, no tool call."""
    return Reply([], stop_reason, thinking=thinking)


def refusal(
    text: str = "I can",
    tool_calls: list[dict[str, object]] | None = None,
    *,
    category: str | None = "cyber",
    explanation: str | None = "This request could enable cyber harm.",
) -> Reply:
    """`stop_reason: "refusal"` with `stop_details` (RefusalStopDetails), after whatever was streamed."""
    r = reply(text, tool_calls, stop_reason="refusal")
    r.stop_details = {"type": "refusal", "category": category, "explanation": explanation}
    return r


def cut_at_max_tokens(text: str, call: dict[str, object], keep_chars: int, *, thinking: str = "") -> Reply:
    """A reply that hit `max_tokens` inside a tool call: only the first `keep_chars` of its input JSON
    were generated (the SDK parses such a prefix in partial mode into an input missing keys)."""
    import json

    r = reply(text, [call], stop_reason="max_tokens", thinking=thinking)
    r.partial_json = json.dumps(call.get("input", {}))[:keep_chars]
    return r


def invalid_tool_json(call_name: str = "shell", raw: str = '{"command": "ls" "-la"}') -> Reply:
    """A tool call whose streamed input is not valid JSON (the SDK raises ValueError on it)."""
    r = reply("", [{"name": call_name, "input": {}}])
    r.partial_json = raw
    return r


def _doomed_partial() -> list[dict[str, object]]:
    # A half-sent tool call: a client that ran it before the reply was complete would be wrong.
    return reply(
        "This partial reply must be discarded.",
        [{"name": "shell", "input": {"command": "echo partial"}, "id": "toolu_partial"}],
    ).content


def http_error(
    status: int, type: str = "", message: str = "", headers: dict[str, str] | None = None
) -> HttpError:
    t = type or ERROR_TYPES.get(status, "api_error")
    return HttpError(
        status, t, message or f"fake {t}", {"retry-after-ms": "1"} if headers is None else headers
    )


def overloaded(retry_after_ms: int = 1) -> HttpError:
    """HTTP 529 asking the client to wait `retry_after_ms` (the API's `retry-after-ms` header)."""
    return http_error(529, headers={"retry-after-ms": str(retry_after_ms)})


def prompt_too_long(tokens: int, maximum: int) -> HttpError:
    """The API's 400 for a prompt over the model's window (message text as the API words it)."""
    msg = f"prompt is too long: {tokens} tokens > {maximum} maximum"
    return http_error(400, "invalid_request_error", msg, headers={"x-should-retry": "false"})


def error_event(type: str = "overloaded_error", after: int = 3) -> Reply:
    """An `event: error` frame after `after` stream events of a partial reply."""
    return Reply(_doomed_partial(), fail="error_event", fail_after=after, error_type=type)


def cut(after: int = 3) -> Reply:
    """The connection closes mid-body after `after` stream events."""
    return Reply(_doomed_partial(), fail="cut", fail_after=after)


def stall(secs: float = 5.0, after: int = 3) -> Reply:
    """The server goes silent for `secs` after `after` stream events, then closes."""
    return Reply(_doomed_partial(), fail="stall", fail_after=after, stall_secs=secs)


def pings_only(secs: float = 60.0, every: float = 0.05, after: int = 1) -> Reply:
    """After `after` events, only `ping` events every `every` seconds for `secs`, then the connection
    closes mid-body: a dead stream kept alive (a known failure of the API)."""
    return Reply(_doomed_partial(), fail="pings", fail_after=after, stall_secs=secs, ping_every=every)


def retry_at(secs_from_now: float, status: int = 429) -> HttpError:
    """An error whose `retry-after` is an HTTP date `secs_from_now` ahead (RFC 9110 allows either form)."""
    import email.utils
    import time

    return http_error(
        status, headers={"retry-after": email.utils.formatdate(time.time() + secs_from_now, usegmt=True)}
    )


def truncated(after: int = 3) -> Reply:
    """The body ends cleanly after `after` events, without `message_delta`/`message_stop`."""
    return Reply(_doomed_partial(), fail="truncate", fail_after=after)


def last_user_text(body: dict[str, Any]) -> str:
    """The text blocks of the request's last message (to recognise a kind of request in `respond`)."""
    messages = body.get("messages") or []
    content = messages[-1].get("content") if messages else ""
    if isinstance(content, str):
        return content
    return "\n".join(
        b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text"
    )
