"""Stop reasons, thinking and knobs on the Anthropic backend: the real SDK against the loopback server."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from openbot.agent.models.anthropic.backend import AnthropicModel
from openbot.agent.models.base import ModelOptions, ModelRequest, PromptTooLong, ToolSpec
from openbot.events import ListSink, Notice, Retry
from openbot.stops import LimitReached
from openbot.testing.fakeapi import (
    FakeAnthropic,
    cut_at_max_tokens,
    invalid_tool_json,
    refusal,
    reply,
    stall,
    thinking_only,
)

KEY = "sk-ant-test-0123456789-secret"
TOOLS = [ToolSpec("edit", "Edit a file.", {"type": "object", "properties": {"path": {"type": "string"}}})]
EDIT = {
    "name": "edit",
    "id": "toolu_e",
    "input": {"command": "str_replace", "path": "a.py", "old_str": "x = 1", "new_str": "x = 2"},
}


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        yield fake
    assert not fake.overcalled


def model(**options: Any) -> AnthropicModel:
    return AnthropicModel("claude-sonnet-5-5", backoff_secs=0.001, options=ModelOptions(**options))


def request(messages: list[dict[str, Any]] | None = None, **kw: Any) -> ModelRequest:
    return ModelRequest("Be careful.", TOOLS, messages or [{"role": "user", "content": "Fix it."}], **kw)


def test_thinking_blocks_come_back_with_their_signature_and_are_accepted_when_sent_back_unchanged(
    api: FakeAnthropic,
) -> None:
    api.add(reply("", [EDIT], thinking="I should edit a.py."), reply("Done.", thinking="All good."))
    m = model(thinking="adaptive")
    first = m.complete(request(), ListSink())
    assert first.content[0]["type"] == "thinking" and first.content[0]["signature"].startswith("EqFake")
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "Fix it."}]},
        {"role": "assistant", "content": first.content},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_e", "content": "ok"}]},
    ]
    assert m.complete(request(messages), ListSink()).text == "Done."
    assert api.bodies[0]["thinking"] == {"type": "adaptive"}
    assert api.bodies[1]["messages"][1]["content"][0] == first.content[0]  # exactly as received


def test_an_edited_earlier_message_invalidates_a_thinking_signature_and_drop_block_recovers(
    api: FakeAnthropic,
) -> None:
    """The check the append-only conversation exists for: the fake rejects what the API rejects, and the
    backend recovers as the docs say (drop_block with its beta header, on every later request)."""
    api.add(reply("", [EDIT], thinking="Plan."), reply("Done."), reply("Still fine."))
    m = model()
    first = m.complete(request(), ListSink())
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "Fix it (edited later)."}]},
        {"role": "assistant", "content": first.content},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_e", "content": "ok"}]},
    ]
    sink = ListSink()
    assert m.complete(request(messages), sink).text == "Done."
    assert m.complete(request(messages), ListSink()).text == "Still fine."
    [retry] = [e for e in sink.events if isinstance(e, Retry)]
    assert "bound to a different conversation" in retry.cause and retry.wait_secs == 0
    [dropped] = [e for e in sink.events if isinstance(e, Notice) and e.kind == "thinking_dropped"]
    assert dropped.data["dropped"] == [{"type": "drop_block", "path": "messages.1.content.0"}]
    rejected, *resent = [r for r in api.requests if r.path == "/v1/messages"][1:]
    assert "block_binding" not in (rejected.body.get("thinking") or {})
    for r in resent:
        assert r.body["thinking"]["block_binding"] == {"prefix_mismatch_behavior": "drop_block"}
        assert "thinking-binding-controls-2026-08-01" in r.headers["anthropic-beta"]


def test_a_refusal_comes_back_with_its_stop_details(api: FakeAnthropic) -> None:
    api.add(refusal("I can", [EDIT], category="cyber", explanation="could enable cyber harm"))
    result = model().complete(request(), ListSink())
    assert result.stop_reason == "refusal"
    assert result.stop_details == {
        "type": "refusal",
        "category": "cyber",
        "explanation": "could enable cyber harm",
    }


def test_a_tool_call_cut_at_max_tokens_is_asked_again_with_twice_the_limit(api: FakeAnthropic) -> None:
    api.add(cut_at_max_tokens("Editing.", EDIT, keep_chars=60), reply("Editing.", [EDIT]))
    sink = ListSink()
    result = model().complete(request(max_tokens=4000), sink)
    assert result.stop_reason == "tool_use" and result.tool_uses[0]["input"] == EDIT["input"]
    assert [b["max_tokens"] for b in api.bodies] == [4000, 8000]
    [notice] = [e for e in sink.events if isinstance(e, Notice)]
    assert notice.kind == "reply_truncated" and "nothing in it was run" in notice.message
    assert result.usage.output_tokens > 0 and result.usage.cost_usd > 0  # both calls are billed


def test_a_reply_still_cut_at_the_models_maximum_is_returned_as_truncated(api: FakeAnthropic) -> None:
    api.add(cut_at_max_tokens("", EDIT, keep_chars=60))
    m = AnthropicModel("claude-sonnet-5-5", options=ModelOptions(), max_output_tokens=4000)
    result = m.complete(request(max_tokens=4000), ListSink())
    assert result.truncated and "new_str" not in result.tool_uses[0]["input"]  # the SDK's partial parse


def test_a_text_reply_at_max_tokens_is_returned_as_it_is(api: FakeAnthropic) -> None:
    api.add(reply("A long essay", stop_reason="max_tokens"))
    result = model().complete(request(), ListSink())
    assert result.truncated and result.text == "A long essay" and len(api.bodies) == 1


def test_a_reply_spent_entirely_on_thinking_is_empty(api: FakeAnthropic) -> None:
    api.add(thinking_only())
    result = model().complete(request(), ListSink())
    assert result.empty and result.content[0]["type"] == "thinking"


@pytest.mark.parametrize("raw", ['{"command": ls -la}', '{"command": "ls" "-la"}', '{"command": "ls"'])
def test_tool_input_that_is_not_json_is_a_defect_not_a_crash(api: FakeAnthropic, raw: str) -> None:
    """The SDK raises on some (ValueError) and parses others leniently (partial mode): both are defects."""
    api.add(invalid_tool_json(raw=raw))
    result = model().complete(request(), ListSink())
    assert "not valid JSON" in result.defect and not result.tool_uses


def test_prompt_too_long_is_its_own_error_with_the_numbers(api: FakeAnthropic) -> None:
    api.window = 50
    with pytest.raises(PromptTooLong) as info:
        model().complete(request(), ListSink())
    assert info.value.maximum == 50 and info.value.tokens > 50 and len(api.bodies) == 1


def test_knobs_reach_the_request(api: FakeAnthropic) -> None:
    api.add(reply("a"), reply("b"), reply("c"))
    model(thinking="off", effort="low").complete(request(), ListSink())
    model(thinking="6000", cache_ttl="1h").complete(request(max_tokens=16000), ListSink())
    model().complete(request(), ListSink())
    first, second, third = api.bodies
    assert first["thinking"] == {"type": "disabled"} and first["output_config"] == {"effort": "low"}
    assert second["thinking"] == {"type": "enabled", "budget_tokens": 6000}
    assert second["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert "thinking" not in third and "output_config" not in third  # the model's defaults


def test_one_hour_cache_writes_are_priced_at_twice_the_input(api: FakeAnthropic) -> None:
    api.add(reply("a"))
    result = model(cache_ttl="1h").complete(request(), ListSink())
    u = result.usage
    assert u.cache_write_tokens > 0 and u.cache_write_1h_tokens == u.cache_write_tokens
    expected = (u.input_tokens * 2 + u.cache_write_tokens * 4 + u.output_tokens * 10) / 1e6
    assert u.cost_usd == pytest.approx(expected)


def test_a_stall_longer_than_the_wall_time_budget_stops_at_the_deadline(api: FakeAnthropic) -> None:
    api.add(stall(secs=60))
    started = time.monotonic()
    with pytest.raises(LimitReached) as info:
        model().complete(request(deadline=started + 1.0), ListSink())
    assert info.value.kind == "max_minutes" and time.monotonic() - started < 30  # not the 60 s stall


def test_waits_never_pass_the_deadline(api: FakeAnthropic) -> None:
    from openbot.testing.fakeapi import overloaded

    api.add(overloaded(retry_after_ms=120_000))
    sink = ListSink()
    started = time.monotonic()
    with pytest.raises(LimitReached):
        model().complete(request(deadline=started + 0.5), sink)
    assert time.monotonic() - started < 60 and [e.wait_secs for e in sink.events if isinstance(e, Retry)] == [
        120.0
    ]  # stopped at the 0.5 s deadline, not after the 120 s asked for
