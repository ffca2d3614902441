"""The Anthropic backend with the real SDK against the loopback Messages API server."""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from openbot.agent.models.anthropic.backend import AnthropicModel
from openbot.agent.models.base import ModelOptions, ModelRequest, ToolSpec, Usage
from openbot.agent.models.pricing import cost_usd
from openbot.errors import ModelError, UsageError
from openbot.events import ListSink, Retry, TextDelta, to_record
from openbot.testing.fakeapi import (
    FakeAnthropic,
    cache_segments,
    cut,
    error_event,
    http_error,
    overloaded,
    reply,
    stall,
    truncated,
)

MODEL = "claude-sonnet-4-6"
KEY = "sk-ant-test-0123456789-secret"
TOOLS = [
    ToolSpec("shell", "Run a command.", {"type": "object", "properties": {"command": {"type": "string"}}}),
    ToolSpec("edit", "Edit a file.", {"type": "object", "properties": {"path": {"type": "string"}}}),
]


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        yield fake
    assert not fake.overcalled


def model(**kw: Any) -> AnthropicModel:
    return AnthropicModel(MODEL, backoff_secs=0.001, **kw)


def request(messages: list[dict[str, Any]] | None = None) -> ModelRequest:
    return ModelRequest(
        "You are a careful bot.", TOOLS, messages or [{"role": "user", "content": "Fix the bug."}]
    )


def retries(sink: ListSink) -> list[Retry]:
    return [e for e in sink.events if isinstance(e, Retry)]


def test_text_and_tool_use_are_parsed_exactly_and_text_streams(api: FakeAnthropic) -> None:
    tool_input = {"command": "grep -rn 'def main' src/", "options": {"context": 3, "paths": ["a", "b"]}}
    api.add(reply("Let me search the code.", [{"name": "shell", "input": tool_input, "id": "toolu_01"}]))
    sink = ListSink()
    result = model().complete(request(), sink)
    assert result.content == [
        {"type": "text", "text": "Let me search the code."},
        {"type": "tool_use", "id": "toolu_01", "name": "shell", "input": tool_input},
    ]
    assert result.stop_reason == "tool_use" and result.model == MODEL
    deltas = [e.text for e in sink.events if isinstance(e, TextDelta)]
    assert len(deltas) > 1 and "".join(deltas) == "Let me search the code."
    body = api.bodies[0]
    assert body["stream"] is True and body["model"] == MODEL and body["max_tokens"] == 8192
    assert [t["name"] for t in body["tools"]] == ["shell", "edit"]
    assert {k: v for k, v in body["tools"][0].items()} == TOOLS[0].to_api()
    api.assert_done()


def test_429_is_waited_out_by_openbot_honouring_retry_after_ms_with_an_event(api: FakeAnthropic) -> None:
    api.add(http_error(429, headers={"retry-after-ms": "30"}), reply("after the wait"))
    sink = ListSink()
    assert model().complete(request(), sink).text == "after the wait"
    [retry] = retries(sink)
    assert retry.wait_secs == pytest.approx(0.03) and "rate limited" in retry.cause
    assert len(api.requests) == 2  # openbot sent both: nothing retries behind its back
    api.assert_done()


@pytest.mark.parametrize("status", [500, 503, 529])
def test_server_errors_are_waited_out(api: FakeAnthropic, status: int) -> None:
    api.add(http_error(status), http_error(status), reply("fine"))
    sink = ListSink()
    assert model().complete(request(), sink).text == "fine"
    assert len(api.requests) == 3 and len(retries(sink)) == 2
    api.assert_done()


def test_x_should_retry_false_is_obeyed_at_once(api: FakeAnthropic) -> None:
    api.add(http_error(529, headers={"x-should-retry": "false"}), reply("never"))
    sink = ListSink()
    with pytest.raises(ModelError, match="the API said not to retry"):
        model().complete(request(), sink)
    assert len(api.requests) == 1 and not retries(sink)


def test_x_should_retry_true_retries_even_a_400(api: FakeAnthropic) -> None:
    api.add(http_error(400, headers={"x-should-retry": "true", "retry-after-ms": "1"}), reply("ok"))
    assert model().complete(request(), ListSink()).text == "ok"


@pytest.mark.parametrize(
    ("fault", "cause"),
    [
        (error_event("overloaded_error"), "overloaded_error mid-stream"),
        # after=13: the partial reply has begun a tool_use block, with some of its input JSON.
        (cut(after=13), "connection dropped (IncompleteRead(0 bytes read)"),
        (truncated(after=13), "ended before message_stop"),
        (error_event("api_error"), "server error mid-stream api_error"),
    ],
)
def test_a_broken_stream_is_resent_and_the_partial_reply_discarded(
    api: FakeAnthropic, fault: Any, cause: str
) -> None:
    api.add(
        fault, reply("The whole answer.", [{"name": "edit", "input": {"path": "x.py"}, "id": "toolu_ok"}])
    )
    sink = ListSink()
    result = model().complete(request(), sink)
    assert [b.get("id") for b in result.tool_uses] == ["toolu_ok"]
    assert result.text == "The whole answer."
    [retry] = retries(sink)
    assert retry.attempt == 1 and cause in retry.cause and retry.wait_secs == 0  # re-sent at once
    assert len(api.requests) == 2 and api.requests[0].raw == api.requests[1].raw
    api.assert_done()


def test_a_stream_broken_again_is_re_sent_with_backoff_each_retry_an_event(api: FakeAnthropic) -> None:
    api.add(cut(), error_event("api_error"), cut(), reply("at last"))
    sink = ListSink()
    assert model().complete(request(), sink).text == "at last"
    assert [(r.attempt, r.wait_secs) for r in retries(sink)] == [(1, 0), (2, 0.001), (3, 0.002)]
    assert len(api.requests) == 4
    api.assert_done()


def test_a_stalled_stream_is_noticed_after_the_read_timeout_and_resent(api: FakeAnthropic) -> None:
    api.add(stall(secs=60), reply("awake"))  # the stall's thread is a daemon: its length costs nothing
    sink = ListSink()
    started = time.monotonic()
    reply_ = model(options=ModelOptions(read_timeout_secs=0.3)).complete(request(), sink)
    assert reply_.text == "awake" and time.monotonic() - started < 30  # not the stall's 60 s
    assert "stalled stream" in retries(sink)[0].cause


def test_persistent_overload_gives_up_after_max_attempts_naming_the_cause(api: FakeAnthropic) -> None:
    api.add(*[error_event("overloaded_error") for _ in range(3)])
    sink = ListSink()
    with pytest.raises(ModelError) as info:
        model(max_attempts=3).complete(request(), sink)
    assert info.value.message.startswith("the API stayed overloaded for ")
    assert info.value.message.endswith(" over 3 attempts (overloaded_error mid-stream)")
    assert [r.attempt for r in retries(sink)] == [1, 2] and len(api.requests) == 3
    billed = info.value.usage
    assert billed is not None and billed.total_tokens > 0 and billed.cost_usd > 0
    api.assert_done()


def test_persistent_529_ends_when_patience_is_spent(api: FakeAnthropic) -> None:
    api.add(*[overloaded(retry_after_ms=100) for _ in range(50)])
    sink = ListSink()
    with pytest.raises(
        ModelError, match=r"stayed overloaded for .* over \d+ attempts \(overloaded_error HTTP 529\)"
    ):
        model(options=ModelOptions(patience_secs=0.35)).complete(request(), sink)
    # waits of 0.1 s each until the next one would pass 0.35 s of patience
    assert 3 <= len(retries(sink)) <= 4 and len(api.requests) == len(retries(sink)) + 1


def test_connection_refused_is_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeAnthropic() as fake:
        url = fake.base_url
    monkeypatch.setenv("ANTHROPIC_BASE_URL", url)  # nothing listens there any more
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    with pytest.raises(ModelError, match="stayed unavailable for .* over 2 attempts"):
        model(max_attempts=2).complete(request(), ListSink())


def test_401_fails_at_once_with_a_key_hint_and_no_key(api: FakeAnthropic) -> None:
    api.add(http_error(401, message="invalid x-api-key"))
    sink = ListSink()
    with pytest.raises(ModelError) as info:
        model().complete(request(), sink)
    assert len(api.requests) == 1 and not retries(sink)
    assert "invalid x-api-key" in info.value.message and "ANTHROPIC_API_KEY" in info.value.hint
    assert KEY not in info.value.one_line()
    assert api.requests[0].headers["Authorization"] == f"Bearer {KEY}"  # the key went only to the server


def test_400_fails_at_once_with_the_api_message(api: FakeAnthropic) -> None:
    api.add(http_error(400, message="messages.1.content: tool_result without tool_use"))
    with pytest.raises(ModelError, match="HTTP 400 invalid_request_error.*tool_result without tool_use"):
        model().complete(request(), ListSink())
    assert len(api.requests) == 1


def test_missing_key_is_a_usage_error_naming_the_variable() -> None:
    with pytest.raises(UsageError, match="ANTHROPIC_API_KEY") as info:
        AnthropicModel(MODEL)
    assert info.value.exit_code == 2


def test_the_key_appears_in_no_event(api: FakeAnthropic) -> None:
    api.add(error_event(), cut(), http_error(500), reply("done"))
    sink = ListSink()
    model().complete(request(), sink)
    records = json.dumps([to_record(e, n) for n, e in enumerate(sink.events)])
    assert len(retries(sink)) == 3 and KEY not in records


def test_usage_and_cost_come_from_the_api(api: FakeAnthropic) -> None:
    u = {
        "input_tokens": 1000,
        "output_tokens": 500,
        "cache_read_input_tokens": 2000,
        "cache_creation_input_tokens": 100,
    }
    api.add(reply("ok", usage=u))
    usage = model().complete(request(), ListSink()).usage
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens, usage.cache_write_tokens) == (
        1000,
        500,
        2000,
        100,
    )
    # Sonnet 4.6: $3 in, $15 out, reads 0.1x, 5-minute writes 1.25x (per million tokens).
    assert usage.cost_usd == pytest.approx((1000 * 3 + 500 * 15 + 2000 * 0.3 + 100 * 3.75) / 1e6)


def test_billed_usage_of_a_broken_attempt_is_added(api: FakeAnthropic) -> None:
    api.add(error_event(), reply("ok", usage={"input_tokens": 10, "output_tokens": 5}))
    usage = model().complete(request(), ListSink()).usage
    # The broken stream wrote the cache and reported 1 output token; the second read it back.
    assert usage.input_tokens == 10 and usage.output_tokens == 6
    assert usage.cache_write_tokens == usage.cache_read_tokens > 0
    assert usage.cost_usd == pytest.approx(cost_usd(MODEL, Usage(**{**vars(usage), "cost_usd": 0.0})))


def grow(messages: list[dict[str, Any]], step: int) -> None:
    """What the turn engine does after each tool-using reply: assistant tool_use, user tool_result."""
    call_id = f"toolu_{step}"
    messages.append(
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": call_id, "name": "shell", "input": {"command": f"step {step}"}}
            ],
        }
    )
    messages.append(
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": call_id, "content": f"output {step} " * 50}],
        }
    )


def marked_at(body: dict[str, Any]) -> list[int]:
    return [i for i, (_, marked) in enumerate(cache_segments(body)) if marked]


def test_cache_breakpoints_roll_and_keep_the_previous_prefix_byte_stable(api: FakeAnthropic) -> None:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Fix the failing test in tests/test_x.py."}]
    backend = model()
    calls = 5
    for step in range(calls):
        api.add(reply(f"step {step}"))
        snapshot = copy.deepcopy(messages)
        backend.complete(request(messages), ListSink())
        assert messages == snapshot, "the caller's messages were mutated"
        grow(messages, step)
    assert "cache_control" not in json.dumps(messages)
    for k, body in enumerate(api.bodies):
        markers = marked_at(body)
        assert len(markers) <= 4
        assert [("cache_control" in t) for t in body["tools"]] == [False, True]
        assert body["system"] == [
            {"type": "text", "text": "You are a careful bot.", "cache_control": {"type": "ephemeral"}}
        ]
        assert "cache_control" in body["messages"][-1]["content"][-1]
        assert len(markers) == (3 if k == 0 else 4)
    for prev, nxt in zip(api.bodies, api.bodies[1:], strict=False):
        # Everything up to the previous call's last breakpoint is identical (markers aside) and marked again.
        last = marked_at(prev)[-1]
        prev_texts = [text for text, _ in cache_segments(prev)]
        next_texts = [text for text, _ in cache_segments(nxt)]
        assert next_texts[: last + 1] == prev_texts[: last + 1] and len(next_texts) > last + 1
        assert last in marked_at(nxt)
        assert json.dumps(nxt["tools"]) == json.dumps(prev["tools"])
        assert json.dumps(nxt["system"]) == json.dumps(prev["system"])


def test_the_simulated_cache_is_read_on_every_later_call(api: FakeAnthropic) -> None:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Start."}]
    backend = model()
    replies = []
    for step in range(4):
        api.add(reply("ok"))
        replies.append(backend.complete(request(messages), ListSink()))
        grow(messages, step)
    assert replies[0].usage.cache_read_tokens == 0 and replies[0].usage.cache_write_tokens > 0
    for before, after in zip(replies, replies[1:], strict=False):
        # Each call reads all the previous call wrote and read.
        prefix = before.usage.cache_read_tokens + before.usage.cache_write_tokens
        assert after.usage.cache_read_tokens == prefix
        assert after.usage.input_tokens == 0


def test_marking_breakpoints_leaves_the_conversation_untouched() -> None:
    from openbot.agent.models.params import marked_messages

    stale = {"type": "text", "text": "old", "cache_control": {"type": "ephemeral"}}
    conversation: list[dict[str, Any]] = [
        {"role": "user", "content": "Fix the bug."},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "edit", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}, stale]},
        {"role": "assistant", "content": [{"type": "text", "text": "Done."}]},
    ]
    before = copy.deepcopy(conversation)
    out = marked_messages(conversation)
    assert conversation == before  # markers go on copies only
    marked = [i for i, m in enumerate(out) for b in m["content"] if "cache_control" in b]
    assert marked == [2, 3]  # the newest message and the user message before it; the stale marker dropped
    assert out[0]["content"] == [{"type": "text", "text": "Fix the bug."}]
    assert out[1] is conversation[1]  # unchanged messages are not copied
