"""The Messages request call after call: only what changed is prepared, the bytes are the plain encoding.

Work is counted (messages scanned and encoded per call), never timed: a long run's own time per call
must not grow with the conversation beyond joining its serialised messages.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openbot.agent.budget import Budget
from openbot.agent.context import ContextKeeper
from openbot.agent.models.anthropic.backend import AnthropicModel
from openbot.agent.models.base import ModelRequest, ToolSpec
from openbot.agent.models.params import Prepared, build_params, encode_body, marked_messages
from openbot.agent.tools.base import ToolContext
from openbot.agent.tools.registry import default_tools
from openbot.agent.turn import Turn, TurnLimits
from openbot.events import ListSink
from openbot.state.conversation import Conversation
from openbot.state.messages import Message
from openbot.stops import Completed
from openbot.testing.fakeapi import FakeAnthropic, Reply, reply

MODEL = "claude-sonnet-4-6"
CALLS = 60
TOOLS = [
    ToolSpec("shell", "Run a command.", {"type": "object", "properties": {"command": {"type": "string"}}})
]


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-percall")
        yield fake


def plain(messages: list[Message]) -> str:
    """The body as a fresh build encodes it whole (what every call did before)."""
    request = ModelRequest("You are a bot.", TOOLS, messages)
    return json.dumps(build_params(MODEL, request), ensure_ascii=False)


def test_a_long_turn_prepares_only_the_new_messages_and_sends_the_plain_bytes(
    api: FakeAnthropic, tmp_path: Path
) -> None:
    backend = AnthropicModel(MODEL, backoff_secs=0.001)
    conversation = Conversation()
    conversation.add_user_text("Do the task.")
    work_at_call: list[int] = []
    sent: list[list[Message]] = []

    def respond(body: dict[str, Any]) -> Reply:
        work_at_call.append(backend.prepared.prepared)  # the work done to build this request
        sent.append(list(conversation.messages))
        n = len(work_at_call)
        if n <= CALLS:
            return reply(f"call {n}", [{"name": "shell", "input": {"command": f"echo {n}"}, "id": f"t{n}"}])
        done = {"summary": "done", "action": "discard"}
        return reply("", [{"name": "session_complete", "input": done, "id": "tdone"}])

    api.respond = respond
    work = tmp_path / "work"
    work.mkdir()
    ctx = ToolContext(
        workdir=work, session_dir=tmp_path / "s", env={"PATH": "/usr/bin:/bin"}, sink=ListSink()
    )
    turn = Turn(
        model=backend,
        system="You are a bot.",
        tools=default_tools(),
        conversation=conversation,
        ctx=ctx,
        limits=TurnLimits(max_steps=CALLS + 5),
        budget=Budget(),
        context=ContextKeeper(),
    )
    with pytest.raises(Completed):
        turn.run()
    assert len(sent) == CALLS + 1 and len(sent[-1]) == 2 * CALLS + 1
    per_call = [b - a for a, b in zip([0, *work_at_call], work_at_call, strict=False)]
    # Each call prepares the two messages added since the last one and the two it marks; before, every
    # call scanned every message (121 by the last call here) and encoded the whole body again.
    assert per_call[0] == 2 and max(per_call[1:]) == 4, per_call
    for recorded, messages in zip(api.requests, sent, strict=True):
        body = json.loads(recorded.raw)
        assert body["messages"] == json.loads(json.dumps(marked_messages(messages)))
        assert recorded.raw == json.dumps(body, ensure_ascii=False).encode()  # the plain encoding


def test_a_changed_message_a_new_segment_and_a_shorter_list_are_prepared_again() -> None:
    prepared = Prepared()
    messages: list[Message] = [{"role": "user", "content": "Start. \u00e9\u2028"}]

    def check() -> None:
        request = ModelRequest("You are a bot.", TOOLS, messages)
        assert encode_body(build_params(MODEL, request, None, prepared)) == plain(messages)

    check()
    for n in range(5):
        use = {"type": "tool_use", "id": f"t{n}", "name": "shell", "input": {"command": "ls"}}
        messages.append({"role": "assistant", "content": [{"type": "text", "text": f"ok {n}"}, use]})
        result = {"type": "tool_result", "tool_use_id": f"t{n}", "content": "a\nb"}
        messages.append({"role": "user", "content": [result]})
        check()
    # User input joins the newest message: a new object in its place (stored messages never change).
    messages[-1] = {"role": "user", "content": [*messages[-1]["content"], {"type": "text", "text": "hi"}]}
    check()
    stale = {"type": "text", "text": "old", "cache_control": {"type": "ephemeral"}}
    messages[3] = {"role": "assistant", "content": [stale]}  # a repair in the middle
    check()
    del messages[4:]
    check()
    messages[:] = [{"role": "user", "content": [{"type": "text", "text": "summary"}]}]  # a new segment
    check()
    before = prepared.prepared
    check()
    assert prepared.prepared - before == 1  # unchanged: only the marked message is encoded again


def test_the_body_encoding_is_json_dumps_byte_for_byte() -> None:
    messages: list[Message] = [
        {"role": "user", "content": 'naïve \u2028 "quotes" \\ \x00'},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "hm", "signature": "s"}]},
        {"role": "user", "content": [{"type": "text", "text": "🙂", "cache_control": {"type": "ephemeral"}}]},
    ]
    params = build_params(MODEL, ModelRequest("sys", TOOLS, messages, 100), None, Prepared())
    params["stream"] = True
    assert encode_body(params) == json.dumps(params, ensure_ascii=False)
    assert encode_body({"a": [], "b": {"c": 1.5}}) == json.dumps({"a": [], "b": {"c": 1.5}})
