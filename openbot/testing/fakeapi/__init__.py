"""A loopback server speaking the Anthropic Messages API wire protocol, for tests with the real SDK.

    with FakeAnthropic([reply("hi"), http_error(529), reply("ok", tool_calls=[...])]) as api:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)   # no /v1: the SDK adds it
        ...
        assert api.requests[0].body["model"] == ...
        api.assert_done()

Each `POST /v1/messages` consumes the next scripted item: a reply (streamed as SSE when the request says
`stream: true`, else one JSON message), an HTTP error (with its headers: `retry-after-ms`,
`x-should-retry`), or a reply that fails mid-stream (an `event: error` frame, a cut connection, a stall, or
a clean end without `message_stop`), or a dead stream kept alive by pings alone (`pings_only`). Text goes
out as the API sends it: UTF-8, non-ASCII raw (U+2028 too) unless `ascii_only`; `retry_at` sends an
HTTP-date `retry-after`. Replies may carry a signed thinking block, a refusal with `stop_details`, or a tool
call cut at `max_tokens`. A request beyond the script gets HTTP 500 with `x-should-retry: false` and sets
`overcalled`. Usage is scripted or simulated (see `server`).
Modules: `script` (the items), `wire` (shapes and checks), `server` (HTTP).
"""

from openbot.testing.fakeapi.script import (
    HttpError,
    Reply,
    cut,
    cut_at_max_tokens,
    error_event,
    http_error,
    invalid_tool_json,
    last_user_text,
    overloaded,
    pings_only,
    prompt_too_long,
    refusal,
    reply,
    retry_at,
    stall,
    thinking_only,
    truncated,
)
from openbot.testing.fakeapi.server import FakeAnthropic, Recorded
from openbot.testing.fakeapi.wire import MODELS, cache_segments, count_breakpoints

__all__ = [
    "MODELS",
    "FakeAnthropic",
    "HttpError",
    "Recorded",
    "Reply",
    "cache_segments",
    "count_breakpoints",
    "cut",
    "cut_at_max_tokens",
    "error_event",
    "http_error",
    "invalid_tool_json",
    "last_user_text",
    "overloaded",
    "pings_only",
    "prompt_too_long",
    "refusal",
    "reply",
    "retry_at",
    "stall",
    "thinking_only",
    "truncated",
]
