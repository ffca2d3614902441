"""A loopback server speaking both OpenAI wire protocols, for tests with the real `openai` SDK.

    with FakeOpenAI([reply("", [call]), rate_limited(), reply("done")], models={"qwen3": {}}) as api:
        env["OPENAI_BASE_URL"] = api.base_url        # with /v1, as OpenAI's own is written
        ...
        assert api.bodies[0]["model"] == "qwen3"
        api.assert_done()

Each `POST /v1/responses` or `POST /v1/chat/completions` consumes the next scripted item: a reply (streamed
as that protocol's SSE when the request says `stream: true`), an HTTP error (with its headers:
`retry-after`, `retry-after-ms`, `x-should-retry`), or a reply that fails mid-stream (an error frame, a cut
connection, a stall, or a clean end without its final event). Replies may carry a reasoning item
(Responses), split or malformed tool-call arguments, whole-call chunks without `index` (Chat), and what
local servers send on Chat (`arguments` as an object, no `finish_reason`, calls with neither `index` nor
`id`, `reasoning_content`, keep-alive comments; see `Reply`); `pings_only` is a dead stream kept alive by
comments. Non-ASCII goes out raw unless `ascii_only`. A request beyond the script gets HTTP 500 with
`x-should-retry: false` and sets `overcalled`.
Modules: `script` (the items), `wire_responses` / `wire_chat` (shapes), `checks`, `server` (HTTP).
"""

from openbot.testing.fakeopenai.script import (
    HttpError,
    Reply,
    cut,
    error_event,
    http_error,
    last_user_text,
    malformed,
    no_tools,
    overloaded,
    pings_only,
    rate_limited,
    reply,
    retry_at,
    server_error,
    stall,
    too_long,
    truncated,
)
from openbot.testing.fakeopenai.server import FakeOpenAI, Recorded

__all__ = [
    "FakeOpenAI",
    "HttpError",
    "Recorded",
    "Reply",
    "cut",
    "error_event",
    "http_error",
    "last_user_text",
    "malformed",
    "no_tools",
    "overloaded",
    "pings_only",
    "rate_limited",
    "reply",
    "retry_at",
    "server_error",
    "stall",
    "too_long",
    "truncated",
]
