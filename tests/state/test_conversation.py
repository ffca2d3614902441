"""The saved conversation: append-only, torn-tail tolerant, and always valid for the API after a crash."""

from __future__ import annotations

import json
from pathlib import Path

from openbot.state.conversation import Conversation


def _tool_use(id: str) -> dict:
    return {"type": "tool_use", "id": id, "name": "shell", "input": {"command": "sleep 30"}}


def test_a_tool_call_killed_mid_run_gets_a_result_on_load(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    conv = Conversation(path)
    conv.add_user_text("task")
    conv.append(
        {"role": "assistant", "content": [{"type": "text", "text": "go"}, _tool_use("t1"), _tool_use("t2")]}
    )
    # the process died here: no tool_result was written
    loaded = Conversation.load(path)
    assert loaded.messages[-1]["role"] == "user"
    results = loaded.messages[-1]["content"]
    assert [r["tool_use_id"] for r in results] == ["t1", "t2"] and all(r["is_error"] for r in results)
    loaded.add_user_text("next iteration")  # a resumed iteration's prompt joins the same user message
    again = Conversation.load(path)
    assert again.messages == loaded.messages
    assert [b["type"] for b in again.messages[-1]["content"]] == ["tool_result", "tool_result", "text"]


def test_missing_results_are_put_first_in_an_existing_user_message(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    conv = Conversation(path)
    conv.add_user_text("task")
    conv.append({"role": "assistant", "content": [_tool_use("a")]})
    conv.append({"role": "user", "content": [{"type": "text", "text": "an iteration prompt"}]})
    fixed = Conversation.load(path).messages[-1]["content"]
    assert [b["type"] for b in fixed] == ["tool_result", "text"] and fixed[0]["tool_use_id"] == "a"


def test_a_torn_last_line_is_cut_before_the_next_append(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    conv = Conversation(path)
    conv.add_user_text("one")
    conv.append({"role": "assistant", "content": [{"type": "text", "text": "two"}]})
    with open(path, "ab") as f:
        f.write(b'{"op": "append", "message": {"role": "user", "con')  # a crash mid-write
    loaded = Conversation.load(path)
    loaded.add_user_text("three")
    lines = path.read_text().splitlines()
    assert all(json.loads(line) for line in lines)  # nothing glued onto the fragment
    assert [m["role"] for m in Conversation.load(path).messages] == ["user", "assistant", "user"]


def test_segments_fixed_record_and_repairs_are_appended_never_rewritten(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    conv = Conversation(path)
    conv.set_fixed("SYSTEM", {"AGENTS.md": "rules"})
    conv.append({"role": "user", "content": [{"type": "text", "text": "old"}]})
    conv.append(
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "shell", "input": {}}]}
    )
    before = path.read_bytes()
    conv.start_segment({"role": "user", "content": [{"type": "text", "text": "summary"}]})
    conv.append(
        {"role": "assistant", "content": [{"type": "tool_use", "id": "u", "name": "shell", "input": {}}]}
    )
    assert path.read_bytes().startswith(before)  # the old segment is still there, byte for byte
    loaded = Conversation.load(path)  # the unanswered call "u" is repaired: a record appended
    assert loaded.fixed == {"system": "SYSTEM", "snapshot": {"AGENTS.md": "rules"}}
    assert [m["role"] for m in loaded.messages] == ["user", "assistant", "user"]
    assert loaded.messages[0]["content"][0]["text"] == "summary"
    assert path.read_bytes().startswith(before) and b'"op": "repaired"' in path.read_bytes()
    assert Conversation.load(path).messages == loaded.messages
