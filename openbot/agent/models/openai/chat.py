"""One streamed Chat Completions call (any OpenAI-compatible server) → one `ModelReply`.

Tool calls arrive as `delta.tool_calls` fragments keyed by `index`: the first names the call (`id`,
`function.name`), later ones carry pieces of `function.arguments`, split anywhere. Local servers vary:
some send a whole call in one chunk, some omit `index` or `id`, some say `finish_reason: "stop"` after a
tool call, some send `arguments` as a JSON object instead of its text, some end with `[DONE]` and no
`finish_reason` (taken as the SDK takes it: tool calls if there are any, else stop), some send two whole
parallel calls with neither `index` nor `id` (a fragment naming a function after a whole call starts the
next one) — all accepted. Reasoning (`reasoning_content`, `reasoning`) is not sent back; a reply that is
only reasoning is a thinking-only reply the turn asks again. Arguments that are not a JSON object make
the reply a `defect` (the turn tells the model and asks again); a stream that ends with neither a
`finish_reason` nor `[DONE]` was cut and is re-sent. The frames are read raw (`sse`), not through the SDK's
stream, so `[DONE]` and keep-alive comments are seen: budgets hold on every frame (`outage.Watch`).

    finish_reason   stop → end_turn (tool_use when it holds calls) · tool_calls → tool_use ·
                    length → max_tokens · content_filter → refusal
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from openbot.agent.models import sse
from openbot.agent.models.base import TRUNCATED, ModelReply, ModelRequest, Usage
from openbot.agent.models.openai.convert import chat_messages, chat_tools, parse_arguments
from openbot.agent.models.openai.endpoint import CallSettings
from openbot.agent.models.outage import Outage, Patience, Watch
from openbot.events import EventSink, TextDelta
from openbot.state.messages import Block, text_block

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
    done: bool = False  # the stream ended with `data: [DONE]`
    refusal: str = ""
    reasoning: str = ""  # `reasoning_content` / `reasoning` (vLLM, Ollama, llama.cpp): never sent back
    usage_seen: bool = False


def params(call: CallSettings, request: ModelRequest) -> dict[str, object]:
    out: dict[str, object] = {
        "model": call.target,
        "messages": chat_messages(request.system, request.messages),
        "max_tokens": request.max_tokens,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if request.tools:
        out["tools"] = chat_tools(request.tools)
    knobs = call.options
    sampling = {"temperature": knobs.temperature, "top_p": knobs.top_p, "seed": knobs.seed}
    if request.resample and knobs.temperature is None and knobs.seed is None:
        # a local server's fixed seed and low temperature give the same reply to the same state: a 1.5B
        # model sent one unchanged function five times in a row, ~40 s each
        sampling |= {
            "temperature": min(0.4 + 0.3 * request.resample, 1.2),
            "seed": request.draw or request.resample,
        }
    out.update({k: v for k, v in sampling.items() if v is not None})
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
    watch = Watch(patience, timeout)
    create = call.client.chat.completions.with_streaming_response.create
    with create(**body, timeout=timeout) as response:  # raw frames: `[DONE]` and keep-alives are seen
        for event, data in sse.frames(sse.lines(response.iter_bytes())):
            watch.frame(progress=event != sse.KEEPALIVE)  # budgets hold on every frame
            if event == sse.KEEPALIVE or not data:
                continue
            if data.startswith("[DONE]"):
                got.done = True
                break
            _take(_chunk(data, response), got, sink, billed)
    if not got.finish and not got.done:
        raise Outage("unavailable", "the stream ended before a finish_reason or [DONE]")
    if not got.usage_seen:  # the server sent no usage: estimate, so the budgets still count something
        billed.input_tokens = len(json.dumps(body["messages"])) // 4
        billed.output_tokens = (
            sum(map(len, got.text)) // 4 + sum(len(c.arguments) for c in got.calls.values()) // 4
        )
    return _reply(call, got, billed)


def _chunk(data: str, response: Any) -> dict[str, object]:
    """One decoded chunk; an error object in the stream is the SDK's `APIError`, as its stream raises."""
    import openai

    try:
        chunk = json.loads(data)
    except ValueError:
        raise Outage("unavailable", f"a chunk that is not JSON: {data[:200]}", at_once=True) from None
    if not isinstance(chunk, dict):
        raise Outage("unavailable", f"a chunk that is not an object: {data[:200]}", at_once=True)
    error = chunk.get("error")
    if error:
        message = error.get("message") if isinstance(error, dict) else None
        message = message if isinstance(message, str) and message else "An error occurred during streaming"
        raise openai.APIError(message, response.http_request, body=error)
    return chunk


def _take(chunk: dict[str, Any], got: _Reply, sink: EventSink, billed: Usage) -> None:
    usage = chunk.get("usage")
    if isinstance(usage, dict):
        got.usage_seen = True
        cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
        billed.input_tokens = max(0, (usage.get("prompt_tokens") or 0) - cached)
        billed.cache_read_tokens = cached
        billed.output_tokens = usage.get("completion_tokens") or 0
    for choice in chunk.get("choices") or []:
        delta = choice.get("delta") or {}
        if delta.get("content"):
            got.text.append(delta["content"])
            sink.emit(TextDelta(text=delta["content"]))
        got.reasoning += _text(delta.get("reasoning_content")) + _text(delta.get("reasoning"))
        got.refusal += _text(delta.get("refusal"))
        for piece in delta.get("tool_calls") or []:
            _add_piece(got, piece)
        if choice.get("finish_reason"):
            got.finish = choice["finish_reason"]


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _add_piece(got: _Reply, piece: dict[str, Any]) -> None:
    function = piece.get("function") or {}
    name = _text(function.get("name"))
    call = _slot(got, piece.get("index"), _text(piece.get("id")), name)
    call.id = call.id or _text(piece.get("id"))
    call.name = call.name or name
    arguments = function.get("arguments")
    # Ollama and some others send the arguments as a JSON object, not as the text of one.
    call.arguments += arguments if isinstance(arguments, str) else json.dumps(arguments) if arguments else ""


def _slot(got: _Reply, index: object, call_id: str, name: str) -> _Call:
    """The call a fragment belongs to: by `index`, else by `id`, else the newest call — unless the
    fragment names another function than the newest call, or names one after the newest call's arguments
    are whole (servers that send neither `index` nor `id` send parallel calls one after the other)."""
    if isinstance(index, int):
        return got.calls.setdefault(index, _Call())
    same = [c for c in got.calls.values() if call_id and c.id == call_id]
    if same:
        return same[0]
    newest = got.calls[max(got.calls)] if got.calls else None
    starts = name and newest is not None and newest.name and (name != newest.name or _whole(newest.arguments))
    if call_id or newest is None or starts:
        return got.calls.setdefault(max(got.calls, default=-1) + 1, _Call())
    return newest


def _whole(arguments: str) -> bool:
    try:
        json.loads(arguments)
    except ValueError:
        return False
    return True


def _reply(settings: CallSettings, got: _Reply, billed: Usage) -> ModelReply:
    blocks: list[Block] = []
    text = "".join(got.text)
    if text:
        blocks.append(text_block(text))
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
    if not blocks and got.reasoning.strip():  # thought, then said and did nothing: the turn re-asks
        blocks.append({"type": "thinking", "thinking": got.reasoning, "signature": ""})
    return ModelReply(blocks, stop, billed, settings.label)
