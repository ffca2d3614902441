"""What the Anthropic SDK's objects become in openbot: content blocks as the conversation stores them,
usage (with the passes of a request in which the API compacted the conversation), and the strict JSON
check of streamed tool input (the SDK parses it leniently)."""

from __future__ import annotations

import json
from typing import Any

from openbot.agent.models.base import Usage


def bad_tool_json(streamed: dict[int, str]) -> str:
    """The first streamed tool input that strict JSON parsing rejects (the SDK parses leniently), or ""."""
    for text in streamed.values():
        try:
            value = json.loads(text) if text else {}
        except ValueError as e:
            return f"{e}: {text[:200]}"
        if not isinstance(value, dict):
            return f"not an object: {text[:200]}"
    return ""


def plain_block(block: Any) -> dict[str, Any] | None:
    """An SDK content block as the plain dict the conversation stores (None for an empty text block)."""
    if block.type == "text":
        return {"type": "text", "text": block.text} if block.text else None
    if block.type == "tool_use":
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    if block.type == "thinking":  # sent back exactly as received, signature included
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
    if block.type == "redacted_thinking":
        return {"type": "redacted_thinking", "data": block.data}
    return dict(block.model_dump(mode="json", exclude_none=True))


def copy_usage(api_usage: Any, usage: Usage) -> None:
    """The API's usage into `usage`. When the API compacted the conversation in this request, the top-level
    counts are the reply's own pass (the context it was made from) and `iterations` lists every billed
    pass, the summarising one included: the bill is their sum."""
    iterations = getattr(api_usage, "iterations", None)
    if not iterations:
        return _copy_counts(api_usage, usage)
    top = Usage()
    _copy_counts(api_usage, top)
    for it in iterations:
        part = Usage()
        _copy_counts(it, part)
        usage.add(part)
    usage.context_tokens = top.prompt_tokens


def _copy_counts(api_usage: Any, usage: Usage) -> None:
    usage.input_tokens = api_usage.input_tokens or 0
    usage.output_tokens = api_usage.output_tokens or 0
    usage.cache_read_tokens = getattr(api_usage, "cache_read_input_tokens", 0) or 0
    usage.cache_write_tokens = getattr(api_usage, "cache_creation_input_tokens", 0) or 0
    creation = getattr(api_usage, "cache_creation", None)
    usage.cache_write_1h_tokens = (getattr(creation, "ephemeral_1h_input_tokens", 0) or 0) if creation else 0
