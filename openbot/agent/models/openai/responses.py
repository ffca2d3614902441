"""One streamed Responses API call (`openai:` models) → one `ModelReply`.

Stateless (`store: false`): every request carries the whole conversation, and reasoning items come back with
`encrypted_content` (asked for with `include` whenever the model reasons, whatever its name: a reply that
brings reasoning without it is asked again once with `include`) so they can be passed back with the function
calls they led to, as the API requires; each is kept as an `openai_reasoning` block (openai/convert.py).
Items are taken from `response.output_item.done` (the docs: an `added` item's encrypted content may be
incomplete); usage and status from `response.completed` / `response.incomplete`. An `error` event or
`response.failed` is judged like an HTTP error; a stream without a final event was cut and is re-sent.

    status   completed → tool_use (with function calls) or end_turn · incomplete: max_output_tokens →
             max_tokens, content_filter → refusal · a refusal content part → refusal
"""

from __future__ import annotations

import re
from typing import Any

from openbot.agent.models.base import TRUNCATED, ModelReply, ModelRequest, Usage
from openbot.agent.models.openai.convert import parse_arguments, responses_input, responses_tools
from openbot.agent.models.openai.endpoint import CallSettings
from openbot.agent.models.openai.errors import stream_error
from openbot.agent.models.outage import Outage, Patience
from openbot.events import EventSink, TextDelta
from openbot.state.messages import Block, text_block

REASONING_MODELS = re.compile(r"^(o\d|gpt-5|codex)|-codex")
# The fields a reasoning item may carry as input (ResponseReasoningItemParam); anything newer the API
# adds to its output stays out of the next request.
REASONING_KEYS = ("type", "id", "summary", "content", "encrypted_content", "status")
EFFORTS = {"low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "xhigh"}


def params(call: CallSettings, request: ModelRequest) -> dict[str, object]:
    target = call.target
    out: dict[str, object] = {
        "model": target,
        "input": responses_input(request.messages),
        "max_output_tokens": request.max_tokens,
        "stream": True,
        "store": False,
    }
    if request.system:
        out["instructions"] = request.system
    if request.tools:
        out["tools"] = responses_tools(request.tools)
    for key, value in (("temperature", call.options.temperature), ("top_p", call.options.top_p)):
        if value is not None:
            out[key] = value
    if reasons(target, request.messages):
        out["include"] = ["reasoning.encrypted_content"]
    if REASONING_MODELS.search(target):
        reasoning: dict[str, object] = {}
        if call.options.effort:
            reasoning["effort"] = EFFORTS.get(call.options.effort, call.options.effort)
        elif call.options.thinking == "off":
            reasoning["effort"] = "none"
        if reasoning:
            out["reasoning"] = reasoning
    return out


def reasons(target: str, messages: list[Any]) -> bool:
    """Whether a model reasons, so `encrypted_content` must be asked for (under `store: false` a reasoning
    item passed back by id alone is unknown to the API): its name says so, the conversation holds its
    reasoning, or one of its replies brought reasoning already (whatever it is called)."""
    if REASONING_MODELS.search(target) or target in _REASONERS:
        return True
    return any(
        isinstance(b, dict) and b.get("type") == "openai_reasoning"
        for m in messages
        if isinstance(m.get("content"), list)
        for b in m["content"]
    )


_REASONERS: set[str] = set()  # models seen reasoning in this process, whatever their names


def stream_reply(
    call: CallSettings,
    request: ModelRequest,
    sink: EventSink,
    billed: Usage,
    patience: Patience,
    timeout: float,
) -> ModelReply:
    done: dict[int, Any] = {}  # output_index → the finished item
    final: Any = None
    stream = call.client.responses.create(**params(call, request), timeout=timeout)
    with stream:
        for event in stream:
            kind = event.type
            if kind == "response.output_text.delta":
                sink.emit(TextDelta(text=event.delta))
            elif kind == "response.output_item.done":
                done[event.output_index] = event.item
            elif kind in ("response.completed", "response.incomplete"):
                final = event.response
                _copy_usage(final.usage, billed)
            elif kind == "response.failed":
                error = event.response.error
                raise stream_error(
                    str(getattr(error, "code", "") or ""), str(getattr(error, "message", "")), billed
                )
            elif kind == "error":
                raise stream_error(str(event.code or ""), event.message, billed)
            patience.remaining()  # a trickling stream does not outlive the wall-time budget
    if final is None:
        raise Outage("unavailable", "the stream ended before response.completed")
    items = [done[i] for i in sorted(done)] or list(final.output or [])
    if any(i.type == "reasoning" and not getattr(i, "encrypted_content", None) for i in items):
        if call.target not in _REASONERS:  # asked without `include`: once more, asking for it
            _REASONERS.add(call.target)
            raise Outage("unavailable", "reasoning came without encrypted_content: asked again", at_once=True)
    return _reply(call, final, items, billed)


def _copy_usage(api_usage: Any, usage: Usage) -> None:
    if api_usage is None:
        return
    details = getattr(api_usage, "input_tokens_details", None)
    cached = (getattr(details, "cached_tokens", 0) or 0) if details is not None else 0
    # Cache writes are billed as input: they stay in input_tokens (pricing applies no write premium).
    usage.input_tokens = max(0, (api_usage.input_tokens or 0) - cached)
    usage.cache_read_tokens = cached
    usage.output_tokens = api_usage.output_tokens or 0


def _stop_reason(final: Any, has_calls: bool) -> str:
    if final.status == "incomplete":
        reason = getattr(final.incomplete_details, "reason", "") or ""
        return {"max_output_tokens": "max_tokens", "content_filter": "refusal"}.get(reason, "max_tokens")
    return "tool_use" if has_calls else "end_turn"


def _reply(call: CallSettings, final: object, items: list[Any], billed: Usage) -> ModelReply:
    blocks: list[Block] = []
    refusal = ""
    has_calls = any(item.type == "function_call" for item in items)
    stop = _stop_reason(final, has_calls)
    for item in items:
        if item.type == "reasoning":
            dump = item.model_dump(mode="json", exclude_none=True)
            blocks.append(
                {"type": "openai_reasoning", "item": {k: v for k, v in dump.items() if k in REASONING_KEYS}}
            )
        elif item.type == "message":
            for part in item.content:
                if part.type == "refusal":
                    refusal += part.refusal
                elif part.type == "output_text" and part.text:
                    block = text_block(part.text)
                    if getattr(item, "phase", None):
                        block["openai_phase"] = item.phase
                    blocks.append(block)
        elif item.type == "function_call":
            value, bad = parse_arguments(item.arguments)
            if bad and stop not in TRUNCATED:  # a cut call is the truncation's to handle
                why = f"a tool call's input is not valid JSON: {bad}"[:500]
                return ModelReply([], "tool_use", billed, call.label, defect=why)
            blocks.append({"type": "tool_use", "id": item.call_id, "name": item.name, "input": value})
    if refusal or stop == "refusal":
        details = {
            "type": "refusal",
            "category": None,
            "explanation": refusal or "the content filter stopped it",
        }
        return ModelReply(blocks, "refusal", billed, call.label, stop_details=details)
    return ModelReply(blocks, stop, billed, call.label)
