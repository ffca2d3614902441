"""What the turn does with each stop reason (openbot.agent.replies.judge)."""

from __future__ import annotations

from typing import Any

import pytest

from openbot.agent.models.base import ModelReply
from openbot.agent.replies import judge, refusal_text

TOOL = {"type": "tool_use", "id": "t", "name": "shell", "input": {"command": "ls"}}
TEXT = {"type": "text", "text": "Hello."}
THINK = {"type": "thinking", "thinking": "Hmm.", "signature": "sig"}


def verdict(content: list[dict[str, Any]], stop: str, **kw: Any) -> tuple[str, bool]:
    v = judge(ModelReply(content, stop, **kw))
    return v.action, v.keep


@pytest.mark.parametrize(
    ("content", "stop", "expected"),
    [
        ([TEXT, TOOL], "tool_use", ("run", True)),
        ([TEXT], "end_turn", ("run", True)),
        ([TEXT], "stop_sequence", ("run", True)),
        ([THINK, TEXT, TOOL], "max_tokens", ("reask", False)),  # never run a cut tool call
        ([TOOL], "model_context_window_exceeded", ("reask", False)),
        ([TEXT], "max_tokens", ("reask", True)),  # kept, and continued
        ([THINK], "end_turn", ("reask", False)),  # spent entirely on thinking
        ([], "end_turn", ("run", True)),  # nothing at all: the turn ends (no tool to run)
        ([THINK], "pause_turn", ("continue", True)),
        ([TEXT, TOOL], "refusal", ("refused", False)),
    ],
)
def test_each_stop_reason(content: list[dict[str, Any]], stop: str, expected: tuple[str, bool]) -> None:
    assert verdict(content, stop) == expected


def test_a_defect_is_reasked_and_never_run() -> None:
    v = judge(ModelReply([], "tool_use", defect="a tool call's input is not valid JSON: x"))
    assert (v.action, v.keep) == ("reask", False) and "not valid JSON" in v.note


def test_refusal_text_names_category_and_explanation() -> None:
    details = {"type": "refusal", "category": "bio", "explanation": "Could enable biological harm."}
    assert refusal_text(ModelReply([], "refusal", stop_details=details)) == (
        "the model refused (bio): Could enable biological harm."
    )
    assert "no category given" in refusal_text(ModelReply([], "refusal"))
