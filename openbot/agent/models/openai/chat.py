"""One streamed Chat Completions call (any OpenAI-compatible server) → one `ModelReply`.

Tool calls arrive as `delta.tool_calls` fragments keyed by `index`: the first names the call (`id`,
`function.name`), later ones carry pieces of `function.arguments`, split anywhere. Local servers vary:
some send a whole call in one chunk, some omit `index` or `id`, some say `finish_reason: "stop"` after a
tool call — all accepted. Arguments that are not a JSON object make the reply a `defect` (the turn tells
the model and asks again); a stream that ends without a `finish_reason` was cut and is re-sent.

    finish_reason   stop → end_turn (tool_use when it holds calls) · tool_calls → tool_use ·
                    length → max_tokens · content_filter → refusal
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from openbot.agent.models.base import TRUNCATED, ModelReply, ModelRequest, Usage
from openbot.agent.models.openai.convert import chat_messages, chat_tools, parse_arguments
from openbot.agent.models.openai.endpoint import CallSettings
from openbot.agent.models.outage import Outage, Patience
from openbot.events import EventSink, TextDelta

STOP_REASONS = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
}


@dataclass
class _Call:
    id: str = ""
    name: str = ""
    arguments: str = ""


@dataclass
class _Reply:
    text: list[str] = field(default_factory=list)
    calls: dict[int, _Call] = field(default_factory=dict)
    finish: str = ""
    refusal: str = ""
    usage_seen: bool = False


def params(call: CallSettings, request: ModelRequest) -> dict[str, Any]:
    out: dict[str, Any] = {
        "model": call.target,
        "messages": chat_messages(request.system, request.messages),
        "max_tokens": request.max_tokens,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if request.tools:
        out["tools"] = chat_tools(request.tools)
    return out


def stream_reply(
    call: CallSettings,
    request: ModelRequest,
    sink: EventSink,
    billed: Usage,
    patience: Patience,
    timeout: float,
) -> ModelReply:
    body = params(call, request)
    got = _Reply()
    stream = call.client.chat.completions.create(**body, timeout=timeout)
    with stream:
        for chunk in stream:
            _take(chunk, got, sink, billed)
            patience.remaining()  # a trickling stream does not outlive the wall-time budget
    if not got.finish:
        raise Outage("unavailable", "the stream ended before a finish_reason")
    if not got.usage_seen:  # the server sent no usage: estimate, so the budgets still count something
        billed.input_tokens = len(json.dumps(body["messages"])) // 4
        billed.output_tokens = (
            sum(map(len, got.text)) // 4 + sum(len(c.arguments) for c in got.calls.values()) // 4
        )
    return _reply(call, got, billed)


def _take(chunk: Any, got: _Reply, sink: EventSink, billed: Usage) -> None:
    usage = getattr(chunk, "usage", None)
    if usage is not None:
        got.usage_seen = True
        details = getattr(usage, "prompt_tokens_details", None)
        cached = (getattr(details, "cached_tokens", 0) or 0) if details is not None else 0
        billed.input_tokens = max(0, (usage.prompt_tokens or 0) - cached)
        billed.cache_read_tokens = cached
        billed.output_tokens = usage.completion_tokens or 0
    for choice in chunk.choices or []:
        delta = choice.delta
        if delta is not None and delta.content:
            got.text.append(delta.content)
            sink.emit(TextDelta(text=delta.content))
        if delta is not None and getattr(delta, "refusal", None):
            got.refusal += delta.refusal
        for piece in getattr(delta, "tool_calls", None) or []:
            call = _slot(got, piece)
            call.id = call.id or (piece.id or "")
            function = piece.function
            if function is not None:
                call.name = call.name or (function.name or "")
                call.arguments += function.arguments or ""
        if choice.finish_reason:
            got.finish = choice.finish_reason


def _slot(got: _Reply, piece: Any) -> _Call:
    """The call a fragment belongs to: by `index`, else by `id`, else the newest call."""
    if piece.index is not None:
        return got.calls.setdefault(piece.index, _Call())
    same = [c for c in got.calls.values() if piece.id and c.id == piece.id]
    if same:
        return same[0]
    if piece.id or not got.calls:
        return got.calls.setdefault(max(got.calls, default=-1) + 1, _Call())
    return got.calls[max(got.calls)]


def _reply(settings: CallSettings, got: _Reply, billed: Usage) -> ModelReply:
    blocks: list[dict[str, Any]] = []
    text = "".join(got.text)
    if text:
        blocks.append({"type": "text", "text": text})
    stop = STOP_REASONS.get(got.finish, "end_turn")
    if got.finish == "content_filter":
        why = got.refusal or text or "the server's content filter stopped the reply"
        details = {"type": "refusal", "category": "content_filter", "explanation": why}
        return ModelReply(blocks, "refusal", billed, settings.label, stop_details=details)
    for i, call in sorted(got.calls.items()):
        value, bad = parse_arguments(call.arguments)
        if not call.name:
            bad = bad or "a tool call has no function name"
        if bad and stop not in TRUNCATED:  # a cut call is the truncation's to handle
            return ModelReply(
                [],
                "tool_use",
                billed,
                settings.label,
                defect=f"a tool call's input is not valid JSON: {bad}"[:500],
            )
        blocks.append(
            {"type": "tool_use", "id": call.id or f"call_openbot_{i}", "name": call.name, "input": value}
        )
    if stop == "end_turn" and got.calls:
        stop = "tool_use"
    return ModelReply(blocks, stop, billed, settings.label)
