"""Append-only compaction: the size that decides, the summary request, the new segment's first message."""

from __future__ import annotations

from typing import Any

from openbot.agent.context import ContextKeeper, compact, transcript
from openbot.agent.models.base import ModelReply, ModelRequest, PromptTooLong, Usage
from openbot.events import ListSink


class Summarizer:
    """A backend that answers every request with a summary (and records what it was sent)."""

    model = "claude-sonnet-5-5"

    def __init__(self, too_long: int = 0) -> None:
        self.requests: list[ModelRequest] = []
        self.too_long = too_long  # answer this many requests with "prompt is too long" first

    def complete(self, request: ModelRequest, sink: Any) -> ModelReply:
        self.requests.append(request)
        if self.too_long:
            self.too_long -= 1
            raise PromptTooLong("too long", 900_000, 100_000, usage=Usage(input_tokens=7))
        return ModelReply(
            [{"type": "text", "text": "SUMMARY of the work"}], "end_turn", Usage(input_tokens=50)
        )


def conversation() -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": [{"type": "text", "text": "# Task\nFix the bug."}]},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "secret plan", "signature": "sig"},
                {"type": "tool_use", "id": "t1", "name": "shell", "input": {"command": "pytest"}},
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "1 failed " * 50}],
        },
    ]


def test_the_api_count_plus_what_came_since_decides() -> None:
    keeper = ContextKeeper(window=1000)
    messages = conversation()
    keeper.observe(700, len(messages) - 1)  # the API counted the request without the last message
    assert keeper.measure(messages) > 700 and keeper.needs_compaction(messages)
    keeper.observe(100, len(messages))
    assert not keeper.needs_compaction(messages)


def test_compaction_asks_for_a_summary_and_starts_a_segment_without_editing_anything() -> None:
    messages = conversation()
    before = [dict(m) for m in messages]
    model, sink = Summarizer(), ListSink()
    base = ModelRequest("SYSTEM", [], messages, 4000)
    first, usage = compact(model, base, ContextKeeper(window=100_000), 0, sink)
    assert messages == before  # nothing earlier is changed
    [request] = model.requests
    assert request.system == "SYSTEM" and len(request.messages) == 1  # same system prompt, one user message
    ask = request.messages[0]["content"][0]["text"]
    assert "pytest" in ask and "1 failed" in ask and "secret plan" not in ask  # thinking is not transcribed
    texts = [b["text"] for b in first["content"]]
    assert (
        first["role"] == "user" and texts[0] == "# Task\nFix the bug." and "SUMMARY of the work" in texts[1]
    )
    assert "1 failed" in texts[2]  # the latest tool results are carried over
    assert usage.input_tokens == 50 and any(
        getattr(e, "kind", "") == "context_compacted" for e in sink.events
    )


def test_a_summary_request_that_is_too_long_is_cut_shorter_and_the_window_learnt() -> None:
    model, keeper = Summarizer(too_long=1), ContextKeeper(window=1_000_000)
    first, usage = compact(model, ModelRequest("S", [], conversation(), 4000), keeper, 0, ListSink())
    assert keeper.window == 100_000 and len(model.requests) == 2 and usage.input_tokens == 57
    assert "SUMMARY" in first["content"][1]["text"]


def test_a_scripted_model_gets_a_mechanical_summary_without_a_call() -> None:
    class Scripted(Summarizer):
        model = "scripted:/tmp/s.json"

    model = Scripted()
    first, _ = compact(model, ModelRequest("S", [], conversation(), 4000), ContextKeeper(), 0, ListSink())
    assert not model.requests and "pytest" in first["content"][1]["text"]


def test_the_transcript_keeps_the_newest_messages_that_fit() -> None:
    messages = [{"role": "user", "content": f"message {i} " + "x" * 100} for i in range(50)]
    text = transcript(messages, 1000)
    assert "message 49" in text and "message 0 " not in text and "earlier messages not shown" in text
