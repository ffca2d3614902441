"""What a FakeOpenAI script is made of: replies (text, function calls, reasoning, cuts) and HTTP errors.

One `Reply` is served in whichever protocol the request used: Responses SSE events for
`POST /v1/responses`, Chat Completions chunks for `POST /v1/chat/completions`. Wire shapes follow the
installed `openai` SDK's types (`types/responses/response_*_event.py`, `types/chat/chat_completion_chunk.py`)
and its recorded fixtures (`.inline-snapshot/external/*.bin`: chunks with `tool_calls` deltas whose
`arguments` arrive in pieces, a last chunk with `choices: []` and `usage`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

ERROR_CODES = {
    400: "invalid_request_error",
    401: "invalid_api_key",
    404: "model_not_found",
    429: "rate_limit_exceeded",
    500: "server_error",
    503: "server_error",
    529: "overloaded",
}


@dataclass
class Reply:
    """One assistant reply; `fail` makes it break after `fail_after` stream events (or chunks).

    `raw_arguments` sends the last call's arguments as exactly that text (invalid JSON, as small local
    models write it); `one_chunk_calls` sends each call whole in one chunk without `index` (as some local
    servers do); `finish` is the Chat `finish_reason` / Responses status it ends with ("" = natural).
    What local servers (Ollama, vLLM, llama.cpp) send and OpenAI does not, on Chat: `object_arguments`
    sends `arguments` as a JSON object; `no_finish` ends with `[DONE]` and no `finish_reason`;
    `bare_calls` sends each call whole with neither `index` nor `id`; `reasoning` goes out as
    `reasoning_key` deltas; `keepalive` sends an SSE comment between chunks."""

    text: str = ""
    calls: list[dict[str, object]] = field(default_factory=list)  # {"name", "input", "id"?}
    reasoning: str = ""  # a reasoning item's summary (Responses only); its encrypted content is the server's
    usage: dict[str, int] | None = None  # {"input", "output", "cached"} overrides the simulation
    fail: str = ""  # "" | error_event | cut | stall | truncate | pings
    fail_after: int = 3
    stall_secs: float = 5.0
    raw_arguments: str | None = None
    one_chunk_calls: bool = False
    finish: str = ""  # "" | "length" (cut at the output limit) | "content_filter"
    refusal: str = ""  # a refusal content part (Responses) / delta.refusal (Chat)
    object_arguments: bool = False
    no_finish: bool = False
    bare_calls: bool = False
    reasoning_key: str = "reasoning_content"  # vLLM, llama.cpp; Ollama and newer vLLM: "reasoning"
    keepalive: bool = False
    ping_every: float = 0.05  # fail="pings": seconds between `: keep-alive` comments, for `stall_secs`


@dataclass
class HttpError:
    status: int
    code: str
    message: str
    headers: dict[str, str] = field(default_factory=lambda: {"retry-after-ms": "1"})


def reply(text: str = "", calls: list[dict[str, object]] | None = None, *, reasoning: str = "") -> Reply:
    """Text and function calls (`{"name", "input", "id"?}`), after a reasoning item when given."""
    return Reply(text, list(calls or []), reasoning)


def http_error(
    status: int, code: str = "", message: str = "", headers: dict[str, str] | None = None
) -> HttpError:
    c = code or ERROR_CODES.get(status, "server_error")
    return HttpError(
        status, c, message or f"fake {c}", {"retry-after-ms": "1"} if headers is None else headers
    )


def rate_limited(retry_after: str = "0.02") -> HttpError:
    """HTTP 429 with `retry-after` in seconds, as OpenAI sends it."""
    return http_error(429, headers={"retry-after": retry_after})


def overloaded(retry_after_ms: int = 1) -> HttpError:
    """HTTP 529 (what an overloaded proxy in front of a server says) asking for `retry_after_ms`."""
    return http_error(529, headers={"retry-after-ms": str(retry_after_ms)})


def server_error(status: int = 500) -> HttpError:
    return http_error(status)


def too_long(maximum: int, tokens: int) -> HttpError:
    """The 400 a server gives a prompt over the model's window (OpenAI's and vLLM's wording)."""
    msg = (
        f"This model's maximum context length is {maximum} tokens. However, your messages resulted in "
        f"{tokens} tokens. Please reduce the length of the messages."
    )
    return http_error(400, "context_length_exceeded", msg, headers={"x-should-retry": "false"})


def no_tools(model: str = "gemma:2b") -> HttpError:
    """Ollama's 400 for a model without tool calling."""
    return http_error(
        400, "invalid_request_error", f"registry.ollama.ai/library/{model} does not support tools", {}
    )


def malformed(name: str = "shell", raw: str = '{"command": "ls" "-la"}') -> Reply:
    """A call whose arguments are not valid JSON."""
    return Reply("", [{"name": name, "input": {}}], raw_arguments=raw)


def _doomed() -> list[dict[str, object]]:
    # A half-sent tool call: a client that ran it before the reply was complete would be wrong.
    return [{"name": "shell", "input": {"command": "echo partial"}, "id": "call_partial"}]


def error_event(after: int = 3) -> Reply:
    """An error frame after `after` events of a partial reply."""
    return Reply("This partial reply must be discarded.", _doomed(), fail="error_event", fail_after=after)


def cut(after: int = 3) -> Reply:
    """The connection closes mid-body after `after` events."""
    return Reply("This partial reply must be discarded.", _doomed(), fail="cut", fail_after=after)


def stall(secs: float = 5.0, after: int = 3) -> Reply:
    """The server goes silent for `secs` after `after` events, then closes."""
    return Reply(
        "This partial reply must be discarded.", _doomed(), fail="stall", fail_after=after, stall_secs=secs
    )


def pings_only(secs: float = 60.0, every: float = 0.05, after: int = 1) -> Reply:
    """After `after` events, only `: keep-alive` comments every `every` seconds for `secs`, then a cut."""
    return Reply(
        "This partial reply must be discarded.",
        _doomed(),
        fail="pings",
        fail_after=after,
        stall_secs=secs,
        ping_every=every,
    )


def retry_at(secs_from_now: float, status: int = 429) -> HttpError:
    """An error whose `retry-after` is an HTTP date `secs_from_now` ahead (RFC 9110 allows either form)."""
    import email.utils
    import time

    when = email.utils.formatdate(time.time() + secs_from_now, usegmt=True)
    return http_error(status, headers={"retry-after": when})


def truncated(after: int = 3) -> Reply:
    """The body ends cleanly after `after` events, without its final event (finish_reason / completed)."""
    return Reply("This partial reply must be discarded.", _doomed(), fail="truncate", fail_after=after)


def last_user_text(body: dict[str, Any]) -> str:
    """The text of the request's last user message (either protocol), to recognise a kind of request."""
    items = body.get("input") if "input" in body else body.get("messages")
    for item in reversed(items or []):
        if isinstance(item, dict) and item.get("role") == "user":
            content = item.get("content")
            if isinstance(content, str):
                return content
            return "\n".join(p.get("text", "") for p in content or [] if isinstance(p, dict))
    return ""
