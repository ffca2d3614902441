"""Responses API streaming events for a scripted reply (`types/responses/response_*_event.py`).

response.created → response.in_progress → per output item: response.output_item.added, its deltas
(response.output_text.delta / response.function_call_arguments.delta … .done), response.output_item.done
→ response.completed (or response.incomplete: max_output_tokens / content_filter), with `usage`
incl. `input_tokens_details.cached_tokens`. A reasoning item carries `encrypted_content` only in its
`output_item.done` (the docs: the `added` one may be incomplete).
"""

from __future__ import annotations

from typing import Any

from openbot.testing.fakeopenai.script import Reply
from openbot.testing.fakeopenai.wire_chat import _split, arguments, call_id


def response(
    body: dict[str, object], status: str, output: list[dict[str, object]], usage: object
) -> dict[str, object]:
    """The `Response` object (fields as in the SDK's own test fixture RESPONSE_BODY)."""
    reason = None
    if status == "incomplete":
        reason = {"reason": "max_output_tokens"}
    return {
        "id": "resp_fake",
        "object": "response",
        "created_at": 1_700_000_000,
        "status": status,
        "background": False,
        "error": None,
        "incomplete_details": reason,
        "instructions": body.get("instructions"),
        "max_output_tokens": body.get("max_output_tokens"),
        "model": body.get("model", ""),
        "output": output,
        "parallel_tool_calls": True,
        "previous_response_id": None,
        "store": bool(body.get("store", True)),
        "temperature": 1.0,
        "text": {"format": {"type": "text"}},
        "tool_choice": "auto",
        "tools": body.get("tools") or [],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": usage,
        "metadata": {},
    }


def output_items(item: Reply, encrypted: str | None, n_request: int) -> list[dict[str, object]]:
    """The finished output items: reasoning, a message (text or refusal), function calls."""
    items: list[dict[str, object]] = []
    if item.reasoning:
        summary = [{"type": "summary_text", "text": item.reasoning}]
        items.append(
            {
                "id": f"rs_fake_{n_request}",
                "type": "reasoning",
                "summary": summary,
                "encrypted_content": encrypted,
            }
        )
    if item.text or item.refusal:
        part: dict[str, object] = (
            {"type": "refusal", "refusal": item.refusal}
            if item.refusal
            else {"type": "output_text", "text": item.text, "annotations": []}
        )
        msg_id = f"msg_fake_{n_request}"
        items.append(
            {"id": msg_id, "type": "message", "role": "assistant", "status": "completed", "content": [part]}
        )
    for n, call in enumerate(item.calls):
        items.append(
            {
                "id": f"fc_fake_{n_request}_{n}",
                "type": "function_call",
                "call_id": call_id(call, n),
                "name": call["name"],
                "arguments": arguments(item, n),
                "status": "completed",
            }
        )
    return items


def _item_events(index: int, done: dict[str, Any], size: int) -> list[dict[str, Any]]:
    kind = done["type"]
    if kind == "reasoning":
        opening = {**done, "summary": [], "encrypted_content": None}
    elif kind == "message":
        opening = {**done, "status": "in_progress", "content": []}
    else:
        opening = {**done, "arguments": "", "status": "in_progress"}
    events: list[dict[str, object]] = [
        {"type": "response.output_item.added", "output_index": index, "item": opening}
    ]
    where = {"item_id": done["id"], "output_index": index}
    if kind == "message" and done["content"][0]["type"] == "output_text":
        text = done["content"][0]["text"]
        empty = {"type": "output_text", "text": "", "annotations": []}
        events.append({"type": "response.content_part.added", **where, "content_index": 0, "part": empty})
        events += [
            {"type": "response.output_text.delta", **where, "content_index": 0, "delta": p, "logprobs": []}
            for p in _split(text, size)
        ]
        events.append(
            {"type": "response.output_text.done", **where, "content_index": 0, "text": text, "logprobs": []}
        )
        events.append(
            {"type": "response.content_part.done", **where, "content_index": 0, "part": done["content"][0]}
        )
    elif kind == "function_call":
        events += [
            {"type": "response.function_call_arguments.delta", **where, "delta": p}
            for p in _split(done["arguments"], size)
        ]
        events.append(
            {"type": "response.function_call_arguments.done", **where, "arguments": done["arguments"]}
        )
    events.append({"type": "response.output_item.done", "output_index": index, "item": done})
    return events


def events(
    item: Reply, body: dict[str, object], usage: dict[str, object], items: list[dict[str, object]], size: int
) -> list[dict[str, object]]:
    out = [
        {"type": "response.created", "response": response(body, "in_progress", [], None)},
        {"type": "response.in_progress", "response": response(body, "in_progress", [], None)},
    ]
    for index, done in enumerate(items):
        out += _item_events(index, done, size)
    status = "incomplete" if item.finish in ("length", "max_output_tokens") else "completed"
    final = response(body, status, items, usage)
    if item.finish == "content_filter":
        status, final = (
            "incomplete",
            {**final, "status": "incomplete", "incomplete_details": {"reason": "content_filter"}},
        )
    out.append({"type": f"response.{status}", "response": final})
    return [{**e, "sequence_number": n} for n, e in enumerate(out)]


def usage(prompt: int, output: int, cached: int) -> dict[str, object]:
    return {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": output,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": prompt + output,
    }
