"""Chat Completions streaming chunks for a scripted reply (`chat.completion.chunk`, as the SDK's recorded
fixtures show them: a first chunk with the role, content and `tool_calls` deltas, a chunk with
`finish_reason`, then — when `stream_options.include_usage` — one with `choices: []` and `usage`)."""

from __future__ import annotations

import json
from typing import Any

from openbot.testing.fakeopenai.script import Reply


def _split(s: str, size: int) -> list[str]:
    return [s[i : i + size] for i in range(0, len(s), size)] or [""]


def call_id(call: dict[str, object], n: int) -> str:
    return str(call.get("id") or f"call_fake_{n}")


def arguments(item: Reply, n: int) -> str:
    """The n-th call's arguments as sent: its input as JSON, or the scripted raw text for the last one."""
    if item.raw_arguments is not None and n == len(item.calls) - 1:
        return item.raw_arguments
    return json.dumps(item.calls[n].get("input", {}))


def finish_reason(item: Reply) -> str | None:
    if item.no_finish:
        return None
    return item.finish or ("tool_calls" if item.calls else "stop")


def _chunk(model: str, delta: dict[str, object] | None, finish: str | None = None) -> dict[str, object]:
    choices = (
        [] if delta is None else [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]
    )
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": model,
        "system_fingerprint": "fp_fake",
        "choices": choices,
    }


def _call_deltas(item: Reply, size: int) -> list[dict[str, object]]:
    deltas: list[dict[str, object]] = []
    for n, call in enumerate(item.calls):
        args: Any = arguments(item, n)
        if item.object_arguments:
            args = json.loads(args)
        if item.bare_calls:  # whole, with neither `index` nor `id` (llama.cpp, some Ollama models)
            deltas.append(
                {"tool_calls": [{"type": "function", "function": {"name": call["name"], "arguments": args}}]}
            )
            continue
        if (
            item.one_chunk_calls or item.object_arguments
        ):  # whole, and without `index`, as some local servers send them
            whole = {
                "id": call_id(call, n),
                "type": "function",
                "function": {"name": call["name"], "arguments": args},
            }
            deltas.append({"tool_calls": [whole]})
            continue
        first = {
            "index": n,
            "id": call_id(call, n),
            "type": "function",
            "function": {"name": call["name"], "arguments": ""},
        }
        deltas.append({"tool_calls": [first]})
        deltas += [{"tool_calls": [{"index": n, "function": {"arguments": p}}]} for p in _split(args, size)]
    return deltas


def chunks(item: Reply, body: dict[str, Any], usage: dict[str, object], size: int) -> list[dict[str, object]]:
    model = str(body.get("model", ""))
    out = [_chunk(model, {"role": "assistant", "content": "", "refusal": None})]
    out += [_chunk(model, {item.reasoning_key: p}) for p in _split(item.reasoning, size) if p]
    out += [_chunk(model, {"content": p}) for p in _split(item.text, size) if p]
    if item.refusal:
        out.append(_chunk(model, {"refusal": item.refusal}))
    out += [_chunk(model, d) for d in _call_deltas(item, size)]
    if not item.no_finish:
        out.append(_chunk(model, {}, finish_reason(item)))
    if (body.get("stream_options") or {}).get("include_usage"):
        out.append({**_chunk(model, None), "usage": usage})
    return out


def completion(item: Reply, body: dict[str, object], usage: dict[str, object]) -> dict[str, object]:
    """A non-streamed `chat.completion` (the backend always streams; kept for SDK calls that do not)."""
    calls = [
        {
            "id": call_id(c, n),
            "type": "function",
            "function": {"name": c["name"], "arguments": arguments(item, n)},
        }
        for n, c in enumerate(item.calls)
    ]
    message = {"role": "assistant", "content": item.text or None, "tool_calls": calls or None}
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": body.get("model", ""),
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason(item), "logprobs": None}],
        "usage": usage,
    }


def usage(prompt: int, output: int, cached: int) -> dict[str, object]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": output,
        "total_tokens": prompt + output,
        "prompt_tokens_details": {"cached_tokens": cached},
        "completion_tokens_details": {"reasoning_tokens": 0},
    }
