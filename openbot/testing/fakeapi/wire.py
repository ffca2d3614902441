"""What the fake server computes from a request and sends back: canonical blocks, the prompt-cache
simulation's segments, thinking signatures, token counts, SSE frames, and the model catalogue."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from openbot.testing.fakeapi.script import Reply

MAX_BREAKPOINTS = 4
BINDING_BETA = "thinking-binding-controls-2026-08-01"  # what `drop_block` needs
DEFAULT_WINDOW = 1_000_000


def _context_management(compaction: bool) -> dict[str, object]:
    """`capabilities.context_management` (anthropic/types/context_management_capability.py)."""
    return {
        "context_management": {
            "supported": True,
            "clear_thinking_20251015": {"supported": True},
            "clear_tool_uses_20250919": {"supported": True},
            "compact_20260112": {"supported": compaction},
        }
    }


# The Models API's `ModelInfo` (anthropic/types/model_info.py) for the names tests use.
MODELS: dict[str, dict[str, object]] = {
    "claude-sonnet-5-5": {
        "max_input_tokens": 1_000_000,
        "max_tokens": 128_000,
        "lifecycle": "active",
        "capabilities": _context_management(True),
    },
    "claude-opus-5-5": {
        "max_input_tokens": 1_000_000,
        "max_tokens": 128_000,
        "lifecycle": "active",
        "capabilities": _context_management(True),
    },
    "claude-haiku-4-5": {
        "max_input_tokens": 200_000,
        "max_tokens": 64_000,
        "lifecycle": "active",
        "capabilities": _context_management(False),
    },
    "claude-opus-4-1": {
        "max_input_tokens": 200_000,
        "max_tokens": 32_000,
        "lifecycle": "deprecated",
        "deprecated_at": "2026-06-01T00:00:00Z",
        "retires_at": "2027-01-05T00:00:00Z",
    },
}


def model_info(model_id: str, entry: dict[str, object]) -> dict[str, object]:
    return {
        "type": "model",
        "id": model_id,
        "display_name": model_id.replace("-", " ").title(),
        "created_at": "2026-01-01T00:00:00Z",
        "deprecated_at": None,
        "retires_at": None,
        **entry,
    }


def canon(obj: object) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def strip_marker(block: object) -> object:
    return {k: v for k, v in block.items() if k != "cache_control"} if isinstance(block, dict) else block


def _blocks(content: Any) -> list[Any]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])


def cache_segments(body: dict[str, Any]) -> list[tuple[str, bool]]:
    """The request's cacheable blocks in the API's order, as (canonical text, has cache_control)."""
    segs: list[tuple[str, bool]] = []
    for tool in body.get("tools") or []:
        segs.append((canon(["tool", strip_marker(tool)]), "cache_control" in tool))
    for block in _blocks(body.get("system")):
        segs.append((canon(["system", strip_marker(block)]), "cache_control" in block))
    for i, msg in enumerate(body.get("messages") or []):
        for block in _blocks(msg.get("content")):
            segs.append(
                (canon(["message", i, msg.get("role"), strip_marker(block)]), "cache_control" in block)
            )
    if body.get("cache_control") and segs:  # the top-level kwarg marks the last cacheable block
        segs[-1] = (segs[-1][0], True)
    return segs


def count_breakpoints(body: dict[str, object]) -> int:
    """Explicit `cache_control` blocks, plus one for the top-level kwarg."""
    explicit = cache_segments({**body, "cache_control": None})
    return sum(marked for _, marked in explicit) + (1 if body.get("cache_control") else 0)


def tokens(chars: int) -> int:
    return chars // 4


def prompt_tokens(body: dict[str, object]) -> int:
    """The fake tokenizer: characters of the canonical request / 4."""
    return tokens(sum(len(text) + 1 for text, _ in cache_segments(body)))


def signature(body: dict[str, Any], upto: int) -> str:
    """A thinking block's signature: bound to system, tools and messages[:upto], byte for byte (markers
    aside), as the API's "preserved thinking" check is."""
    prefix = {
        "model": body.get("model"),
        "system": [strip_marker(b) for b in _blocks(body.get("system"))],
        "tools": [strip_marker(t) for t in body.get("tools") or []],
        "messages": [
            {"role": m.get("role"), "content": [strip_marker(b) for b in _blocks(m.get("content"))]}
            for m in (body.get("messages") or [])[:upto]
        ],
    }
    return "EqFake" + hashlib.sha256(canon(prefix).encode()).hexdigest()[:40]


def unbound_blocks(body: dict[str, Any]) -> list[str]:
    """Where a thinking block comes back in a conversation it was not made in (`messages.I.content.J`)."""
    return [
        f"messages.{i}.content.{j}"
        for i, msg in enumerate(body.get("messages") or [])
        if msg.get("role") == "assistant"
        for j, block in enumerate(_blocks(msg.get("content")))
        if isinstance(block, dict)
        and block.get("type") == "thinking"
        and block.get("signature") != signature(body, i)
    ]


def bad_signature(body: dict[str, object]) -> str:
    """The API's 400 message when a thinking block comes back in a conversation it was not made in."""
    where = unbound_blocks(body)
    if not where:
        return ""
    return (
        f"{where[0]}: Invalid `signature` in `thinking` block. The block is bound to a different "
        "conversation. Remove the block, or set `thinking.block_binding.prefix_mismatch_behavior` to "
        '"drop_block".'
    )


def drop_block(body: dict[str, Any]) -> bool:
    binding = (body.get("thinking") or {}).get("block_binding") or {}
    return bool(binding.get("prefix_mismatch_behavior") == "drop_block")


def foreign_block(body: dict[str, Any]) -> str:
    """The API's 400 for a block type it does not have (another protocol's, e.g. an OpenAI reasoning item)."""
    for i, msg in enumerate(body.get("messages") or []):
        for j, block in enumerate(_blocks(msg.get("content"))):
            kind = block.get("type") if isinstance(block, dict) else None
            if isinstance(kind, str) and kind.startswith("openai_"):
                return (
                    f"messages.{i}.content.{j}: Input tag '{kind}' found using 'type' does not match any "
                    "of the expected tags"
                )
    return ""


def full_content(item: Reply, body: dict[str, Any]) -> list[dict[str, object]]:
    """The reply's blocks as the API sends them, a signed thinking block first when scripted."""
    if not item.thinking:
        return list(item.content)
    sig = signature(body, len(body.get("messages") or []))
    return [{"type": "thinking", "thinking": item.thinking, "signature": sig}, *item.content]


def stop_reason(item: Reply) -> str:
    return item.stop_reason or (
        "tool_use" if any(b["type"] == "tool_use" for b in item.content) else "end_turn"
    )


def message(item: Reply, body: dict[str, object], usage: dict[str, int]) -> dict[str, object]:
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", ""),
        "content": full_content(item, body),
        "stop_reason": stop_reason(item),
        "stop_details": item.stop_details,
        "stop_sequence": None,
        "usage": usage,
    }


def _split(s: str, size: int) -> list[str]:
    return [s[i : i + size] for i in range(0, len(s), size)] or [""]


def _block_events(
    block: dict[str, Any], raw_json: str | None, size: int
) -> tuple[dict[str, object], list[object]]:
    """(content_block_start's block, the deltas) for one block."""
    if block["type"] == "tool_use":
        text = json.dumps(block["input"], ensure_ascii=False) if raw_json is None else raw_json
        return {**block, "input": {}}, [
            {"type": "input_json_delta", "partial_json": p} for p in _split(text, size)
        ]
    if block["type"] == "compaction":  # the summary arrives in one delta
        delta = {"type": "compaction_delta", "content": block["content"], "encrypted_content": None}
        return {"type": "compaction", "content": None, "encrypted_content": None}, [delta]
    if block["type"] == "thinking":
        deltas: list[object] = [
            {"type": "thinking_delta", "thinking": p} for p in _split(block["thinking"], size)
        ]
        deltas.append({"type": "signature_delta", "signature": block["signature"]})
        return {"type": "thinking", "thinking": "", "signature": ""}, deltas
    cites = block.get("citations") or []  # streamed as the API streams them: after an empty start
    opening = {**block, "text": ""} | ({"citations": None} if cites else {})
    deltas = [{"type": "text_delta", "text": p} for p in _split(block.get("text", ""), size)]
    return opening, deltas + [{"type": "citations_delta", "citation": c} for c in cites]


def sse_events(
    item: Reply, body: dict[str, object], usage: dict[str, int], size: int
) -> list[tuple[str, object]]:
    start = {**message(item, body, {**usage, "output_tokens": 1}), "content": [], "stop_reason": None}
    start["stop_details"] = None
    if drop_block(body):  # what the API dropped (the shape is assumed: the docs name the array only)
        start["input_transformations"] = [{"type": "drop_block", "path": p} for p in unbound_blocks(body)]
    events: list[tuple[str, object]] = [
        ("message_start", {"type": "message_start", "message": start}),
        ("ping", {"type": "ping"}),
    ]
    content = full_content(item, body)
    last_tool = max((i for i, b in enumerate(content) if b["type"] == "tool_use"), default=-1)
    for i, block in enumerate(content):
        opening, deltas = _block_events(block, item.partial_json if i == last_tool else None, size)
        events.append(
            ("content_block_start", {"type": "content_block_start", "index": i, "content_block": opening})
        )
        events += [
            ("content_block_delta", {"type": "content_block_delta", "index": i, "delta": d}) for d in deltas
        ]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    delta = {"stop_reason": stop_reason(item), "stop_sequence": None, "stop_details": item.stop_details}
    events.append(("message_delta", {"type": "message_delta", "delta": delta, "usage": usage}))
    events.append(("message_stop", {"type": "message_stop"}))
    return events
