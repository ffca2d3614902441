"""The OpenAI-SDK backend with the real `openai` SDK against the loopback server, in both protocols."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from openbot.agent.models.base import ModelOptions, ModelRequest, PromptTooLong, ToolSpec
from openbot.agent.models.openai.backend import OpenAIModel
from openbot.agent.models.openai.endpoint import endpoint_for
from openbot.config.model_names import parse_model
from openbot.errors import ModelError
from openbot.events import ListSink, Retry, TextDelta
from openbot.testing.fakeopenai import (
    FakeOpenAI,
    cut,
    error_event,
    http_error,
    malformed,
    no_tools,
    rate_limited,
    reply,
    server_error,
    stall,
    too_long,
    truncated,
)

KEY = "sk-proj-TESTKEY-openai-0123456789abcdef"
TOOLS = [
    ToolSpec("shell", "Run a command.", {"type": "object", "properties": {"command": {"type": "string"}}})
]
NAMES = {"responses": "openai:gpt-5.1", "chat": "openai-compatible:qwen3-coder"}


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    with FakeOpenAI(models={"gpt-5.1": {}, "qwen3-coder": {}}) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        yield fake
    assert not fake.overcalled


@pytest.fixture(params=["responses", "chat"])
def protocol(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def model(protocol: str, **kw: Any) -> OpenAIModel:
    name = parse_model(NAMES[protocol])
    return OpenAIModel(name, endpoint_for(name), backoff_secs=0.001, **kw)


def request(messages: list[dict[str, Any]] | None = None) -> ModelRequest:
    return ModelRequest("You are careful.", TOOLS, messages or [{"role": "user", "content": "Fix the bug."}])


def call(command: str, id: str = "call_1") -> dict[str, Any]:
    return {"name": "shell", "input": {"command": command}, "id": id}


def test_text_and_a_split_tool_call_come_back_as_blocks_with_usage(api: FakeOpenAI, protocol: str) -> None:
    api.chunk_chars = 3  # arguments arrive in 3-character pieces
    api.add(reply("Looking.", [call("ls -la && git status")]))
    sink = ListSink()
    got = model(protocol).complete(request(), sink)
    assert got.stop_reason == "tool_use" and got.text == "Looking."
    assert got.tool_uses == [
        {"type": "tool_use", "id": "call_1", "name": "shell", "input": {"command": "ls -la && git status"}}
    ]
    assert "".join(e.text for e in sink.events if isinstance(e, TextDelta)) == "Looking."
    assert got.usage.input_tokens > 0 and got.usage.output_tokens > 0
    body = api.bodies[0]
    assert body["stream"] is True
    if protocol == "responses":
        assert body["store"] is False and body["instructions"] == "You are careful."
        assert got.usage.cost_usd > 0  # gpt-5.1 is priced
    else:
        assert body["messages"][0] == {"role": "system", "content": "You are careful."}
        assert got.usage.cost_usd == 0  # a compatible server costs 0 unless the config prices it
        headers = {k.lower(): v for k, v in api.requests[-1].headers.items()}
        assert headers["authorization"] == "Bearer not-needed"  # the OpenAI key is not sent unasked


def test_tool_results_go_back_in_the_protocols_shape_and_cached_tokens_are_counted(
    api: FakeOpenAI, protocol: str
) -> None:
    api.add(reply("", [call("ls")]), reply("Done."))
    m = model(protocol)
    first = m.complete(request(), ListSink())
    convo = [
        {"role": "user", "content": "Fix the bug."},
        {"role": "assistant", "content": first.content},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": "a.py"}]},
    ]
    second = m.complete(request(convo), ListSink())
    assert second.stop_reason == "end_turn" and second.text == "Done."
    assert second.usage.cache_read_tokens > 0  # the prefix sent before was read from the cache
    body = api.bodies[1]
    if protocol == "responses":
        assert body["input"][-1] == {"type": "function_call_output", "call_id": "call_1", "output": "a.py"}
    else:
        assert body["messages"][-1] == {"role": "tool", "tool_call_id": "call_1", "content": "a.py"}


def test_reasoning_items_are_kept_and_sent_back_before_their_calls(api: FakeOpenAI) -> None:
    api.add(reply("", [call("ls")], reasoning="List first."), reply("Done."))
    m = model("responses")
    first = m.complete(request(), ListSink())
    assert first.content[0]["type"] == "openai_reasoning"
    assert first.content[0]["item"]["encrypted_content"].startswith("gAAAAfake")
    assert "include" in api.bodies[0] and api.bodies[0]["include"] == ["reasoning.encrypted_content"]
    convo = [
        {"role": "user", "content": "Fix the bug."},
        {"role": "assistant", "content": first.content},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": "a.py"}]},
    ]
    assert m.complete(request(convo), ListSink()).text == "Done."  # the server checked the reasoning item
    kinds = [i.get("type", "message") for i in api.bodies[1]["input"]]
    assert kinds == ["message", "reasoning", "function_call", "function_call_output"]


def test_a_function_call_without_its_reasoning_item_is_what_the_server_refuses(api: FakeOpenAI) -> None:
    api.add(reply("", [call("ls")], reasoning="List first."))
    m = model("responses")
    first = m.complete(request(), ListSink())
    without = [b for b in first.content if b["type"] != "openai_reasoning"]
    convo = [
        {"role": "user", "content": "Fix the bug."},
        {"role": "assistant", "content": without},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": "a.py"}]},
    ]
    with pytest.raises(ModelError, match="without its required 'reasoning' item"):
        m.complete(request(convo), ListSink())


def test_malformed_arguments_are_a_defect_not_a_crash(api: FakeOpenAI, protocol: str) -> None:
    api.add(malformed("shell", '{"command": "ls" "-la"}'))
    got = model(protocol).complete(request(), ListSink())
    assert got.defect.startswith("a tool call's input is not valid JSON") and got.content == []


def test_whole_calls_without_index_are_accepted(api: FakeOpenAI) -> None:
    r = reply("", [call("ls", "call_a"), call("pwd", "call_b")])
    r.one_chunk_calls = True
    api.add(r)
    got = model("chat").complete(request(), ListSink())
    assert [(t["id"], t["input"]["command"]) for t in got.tool_uses] == [("call_a", "ls"), ("call_b", "pwd")]


@pytest.mark.parametrize(
    "failure", [rate_limited(), server_error(503), http_error(529), error_event(), cut(), truncated()]
)
def test_outages_are_waited_out_and_the_partial_reply_discarded(
    api: FakeOpenAI, protocol: str, failure: Any
) -> None:
    api.add(failure, reply("ok"))
    sink = ListSink()
    got = model(protocol).complete(request(), sink)
    assert got.text == "ok" and not got.tool_uses
    [retry] = [e for e in sink.events if isinstance(e, Retry)]
    if failure == rate_limited():
        assert retry.wait_secs == 0.02  # `retry-after: 0.02` honoured


def test_a_stall_is_a_retry(api: FakeOpenAI, protocol: str) -> None:
    api.add(stall(secs=3), reply("ok"))
    # a mid-stream stall; first_token_secs set, or a chat server would get time to read the prompt
    m = model(protocol, options=ModelOptions(read_timeout_secs=0.5, first_token_secs=0.5))
    sink = ListSink()
    assert m.complete(request(), sink).text == "ok"
    assert "stalled" in [e for e in sink.events if isinstance(e, Retry)][0].cause


def test_patience_runs_out_with_a_model_error(api: FakeOpenAI, protocol: str) -> None:
    api.add(*[server_error() for _ in range(3)])
    with pytest.raises(ModelError, match="stayed unavailable"):
        model(protocol, max_attempts=3).complete(request(), ListSink())


def test_too_long_is_prompt_too_long_with_the_numbers(api: FakeOpenAI, protocol: str) -> None:
    api.add(too_long(4096, 5000))
    with pytest.raises(PromptTooLong) as e:
        model(protocol).complete(request(), ListSink())
    assert (e.value.maximum, e.value.tokens) == (4096, 5000)


def test_a_model_that_cannot_call_tools_is_a_clear_error(api: FakeOpenAI) -> None:
    api.add(no_tools("gemma:2b"))
    with pytest.raises(ModelError, match="cannot call tools") as e:
        model("chat").complete(request(), ListSink())
    assert "tool calling" in e.value.hint


def test_bad_credentials_and_quota_stop_at_once_without_the_key(api: FakeOpenAI, protocol: str) -> None:
    api.add(http_error(401, message=f"Incorrect API key provided: {KEY}"))
    with pytest.raises(ModelError) as e:
        model(protocol).complete(request(), ListSink())
    assert KEY not in e.value.one_line() and "401" in e.value.message
    api.add(http_error(429, "insufficient_quota", "You exceeded your current quota"))
    with pytest.raises(ModelError, match="quota"):
        model(protocol).complete(request(), ListSink())


def test_a_reply_cut_at_the_output_limit_with_a_call_is_asked_again_with_more_room(
    api: FakeOpenAI, protocol: str
) -> None:
    cut_reply = reply("", [call("ls")])
    cut_reply.finish = "length"
    cut_reply.raw_arguments = '{"comm'
    api.add(cut_reply, reply("", [call("ls")]))
    got = model(protocol).complete(
        ModelRequest("s", TOOLS, [{"role": "user", "content": "x"}], 1000), ListSink()
    )
    assert got.tool_uses and got.stop_reason == "tool_use"
    key = "max_output_tokens" if protocol == "responses" else "max_tokens"
    assert [b[key] for b in api.bodies] == [1000, 2000]


def test_refusals_come_back_as_refusal_with_their_text(api: FakeOpenAI, protocol: str) -> None:
    refused = reply("")
    refused.refusal = "I can't help with that."
    if protocol == "chat":
        refused.finish = "content_filter"
    api.add(refused)
    got = model(protocol).complete(request(), ListSink())
    assert got.stop_reason == "refusal" and got.stop_details is not None
    assert got.stop_details["explanation"] == "I can't help with that."


def test_a_local_server_that_sends_no_usage_is_still_counted(api: FakeOpenAI) -> None:
    api.send_usage = False  # some servers ignore stream_options.include_usage
    api.add(reply("A reply of some length.", [call("ls")]))
    got = model("chat").complete(request(), ListSink())
    assert got.usage.input_tokens > 0 and got.usage.output_tokens > 0  # estimated: budgets still count
