"""The memory, session_history and session_complete tools, and the registry's error handling."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from openbot import paths
from openbot.agent.models.base import ToolSpec
from openbot.agent.tools.base import ToolContext, ToolFailed, ToolOutput
from openbot.agent.tools.registry import default_tools, run_tool, tool_specs
from openbot.events import Command, EventLog, ListSink, Message, ToolCall, ToolResult, UserInput
from openbot.state.history import History
from openbot.state.memory import MemoryStore
from openbot.stops import Completion


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(
        workdir=tmp_path,
        session_dir=tmp_path / "session",
        env={},
        memory=MemoryStore(paths.memory_file("bot", "proj")),
        history=History(paths.history_dir("bot", "proj")),
        sink=ListSink(),
    )


def call(ctx: ToolContext, name: str, **input: Any) -> ToolOutput:
    return run_tool(default_tools(), name, input, ctx, "toolu_m")


def test_memory_set_and_remove_write_memory_json(ctx: ToolContext) -> None:
    out = call(ctx, "memory", action="set", key="test command", value="pytest -q")
    assert not out.is_error and "test command" in out.content
    path = paths.memory_file("bot", "proj")
    assert json.loads(path.read_text()) == {"entries": {"test command": "pytest -q"}}
    assert not call(ctx, "memory", action="remove", key="test command").is_error
    assert json.loads(path.read_text()) == {"entries": {}}
    missing = call(ctx, "memory", action="remove", key="test command")
    assert missing.is_error and "there is no memory 'test command'" in missing.content


def test_memory_errors(ctx: ToolContext) -> None:
    assert "needs a value" in call(ctx, "memory", action="set", key="k").content
    assert "must not be empty" in call(ctx, "memory", action="set", key=" ", value="v").content
    assert "must be one of" in call(ctx, "memory", action="forget", key="k").content
    ctx.memory = None
    out = call(ctx, "memory", action="set", key="k", value="v")
    assert out.is_error and "not available" in out.content


def _session(history: History, response: str, events: list[Any], status: str = "completed") -> int:
    meta = history.create_session("run-1", "scripted", prompt_summary="fix the tests")
    log = EventLog(history.events_path(meta.session_id))
    for event in events:
        log.emit(event)
    log.close()
    meta.status, meta.response_summary, meta.action = status, response, "merge"
    history.save(meta)
    return meta.session_number


def test_session_history_list_and_view(ctx: ToolContext) -> None:
    assert ctx.history is not None
    assert call(ctx, "session_history", action="list").content == "No sessions yet."
    _session(ctx.history, "first", [Message(text="hello")])
    number = _session(
        ctx.history,
        "fixed the flaky test",
        [
            UserInput(text="please fix it"),
            Message(text="Running the tests.\nThen fixing."),
            ToolCall(id="t1", name="shell", input={"command": "pytest -q"}),
            Command("t1", "pytest -q", 1, 1500, "".join(f"out {i}\n" for i in range(30)), 300),
            ToolCall(id="t2", name="edit", input={"command": "view", "path": "a.py"}),
            ToolResult(tool_use_id="t2", name="edit", is_error=True, content="a.py does not exist"),
            Command("t3", "sleep 9", None, 500, "", 0, timed_out=True),
            Message(text="Done."),
        ],
    )
    listing = call(ctx, "session_history", action="list").content.splitlines()
    assert len(listing) == 2 and listing[0].startswith(f"#{number}  ")
    assert "completed  merge  fixed the flaky test" in listing[0]
    assert len(call(ctx, "session_history", action="list", limit=1).content.splitlines()) == 1

    response = call(ctx, "session_history", action="view", session_number=number, section="response").content
    assert response.splitlines() == [
        f"Session {number} (completed, response): lines 1–7 of 7",
        "[user]", "please fix it",
        "[assistant]", "Running the tests.", "Then fixing.",
        "[assistant]", "Done.",
    ]  # fmt: skip
    commands = call(ctx, "session_history", action="view", session_number=number, section="commands").content
    assert "$ pytest -q    (exit 1, 1.5 s, t1)" in commands
    assert "  | out 0" in commands and "  | [... 21 lines]" in commands and "  | out 29" in commands
    assert "$ sleep 9    (timed out, 0.5 s, t3)" in commands
    everything = call(ctx, "session_history", action="view", session_number=number).content
    assert '[tool edit] {"command": "view", "path": "a.py"}' in everything
    assert "[tool edit failed] a.py does not exist" in everything and "[assistant]" in everything


def test_session_history_paging_from_the_end(ctx: ToolContext) -> None:
    assert ctx.history is not None
    number = _session(ctx.history, "long", [Message(text="\n".join(f"line {i}" for i in range(1, 101)))])

    def view(**kw: Any) -> ToolOutput:
        return call(ctx, "session_history", action="view", session_number=number, section="response", **kw)

    last = view(limit=10).content.splitlines()
    assert (
        last[0] == f"Session {number} (completed, response): lines 92–101 of 101; use offset=10 for earlier"
    )
    assert last[1:] == [f"line {i}" for i in range(91, 101)]
    earlier = view(limit=10, offset=10).content.splitlines()
    assert earlier[0].endswith("lines 82–91 of 101; use offset=20 for earlier")
    assert earlier[1] == "line 81"
    first = view(limit=10, offset=95).content.splitlines()
    assert first[0] == f"Session {number} (completed, response): lines 1–6 of 101"
    assert first[1:3] == ["[assistant]", "line 1"]
    assert "past the start" in view(offset=500).content
    missing = call(ctx, "session_history", action="view", session_number=99)
    assert missing.is_error and "no session '99'" in missing.content
    assert "needs session_number" in call(ctx, "session_history", action="view").content


def test_session_complete_sets_completion(ctx: ToolContext) -> None:
    bad = call(ctx, "session_complete", summary="done", action="ship")
    assert bad.is_error and "'merge', 'review', 'discard'" in bad.content and bad.completion is None
    assert call(ctx, "session_complete", action="merge").is_error
    assert call(ctx, "session_complete", summary="  ", action="merge").is_error
    out = call(ctx, "session_complete", summary="Fixed the flaky test.", action="review")
    assert (
        out.content.startswith("Session marked complete; the run ends after this turn") and not out.is_error
    )
    assert out.completion == Completion(summary="Fixed the flaky test.", action="review")


class CrashingTool:
    spec = ToolSpec("crash", "Always crashes.", {"type": "object", "properties": {}})

    def run(self, input: dict[str, Any], ctx: ToolContext, tool_use_id: str) -> ToolOutput:
        if input.get("polite"):
            raise ToolFailed("I refuse, politely")
        raise ZeroDivisionError("division by zero")


def test_registry_turns_failures_into_error_results(ctx: ToolContext) -> None:
    tools = [CrashingTool()]
    out = run_tool(tools, "crash", {}, ctx, "toolu_c")  # type: ignore[arg-type]
    assert out.is_error and out.content == "crash failed unexpectedly: ZeroDivisionError: division by zero"
    out = run_tool(tools, "crash", {"polite": True}, ctx, "toolu_c")  # type: ignore[arg-type]
    assert out.is_error and out.content == "I refuse, politely"
    out = run_tool(tools, "nope", {}, ctx, "toolu_n")  # type: ignore[arg-type]
    assert out.is_error and out.content == "unknown tool 'nope'; the tools are: crash"
    out = run_tool(default_tools(), "memory", "not an object", ctx, "toolu_s")
    assert out.is_error and "input must be of type object" in out.content
    out = run_tool(default_tools(), "memory", {"action": "set", "key": "k", "value": 3}, ctx, "toolu_s")
    assert out.is_error and "value must be of type string" in out.content
    out = run_tool(default_tools(), "memory", {"action": "set", "key": "k", "extra": 1}, ctx, "toolu_s")
    assert out.is_error and "unknown field(s) extra" in out.content
    assert isinstance(ctx.sink, ListSink)
    assert sum(isinstance(e, ToolResult) and e.is_error for e in ctx.sink.events) == 6


def test_tool_specs_are_valid_for_the_api() -> None:
    specs = tool_specs(default_tools())
    assert [s.name for s in specs] == ["shell", "edit", "memory", "session_history", "session_complete"]
    for spec in specs:
        api = spec.to_api()
        assert api["input_schema"]["type"] == "object" and api["description"]
        assert set(api["input_schema"]["required"]) <= set(api["input_schema"]["properties"])
        json.dumps(api)
