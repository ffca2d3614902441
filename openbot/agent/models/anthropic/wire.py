"""What a streamed Messages API reply becomes in openbot: the events folded into the final message (as the
SDK's `accumulate_event` folds them, checked against it in tests), content blocks as the conversation
stores them, usage (with the passes of a request in which the API compacted the conversation), and the
strict JSON check of streamed tool input."""

from __future__ import annotations

import json
from typing import Any, cast

from openbot.agent.models.base import Usage
from openbot.state.messages import Block, TextBlock, ToolUseBlock

TOOL_INPUT_BLOCKS = ("tool_use", "server_tool_use", "mcp_tool_use")  # blocks whose input is streamed JSON
USAGE_TOTALS = (  # cumulative counts a `message_delta` may carry; an absent one keeps message_start's
    "input_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "server_tool_use",
    "output_tokens_details",
    "iterations",
)


class Accumulator:
    """The final message of one stream, built event by event; `tool_json` keeps each tool input as sent."""

    def __init__(self) -> None:
        self.message: dict[str, Any] | None = None
        self.tool_json: dict[int, str] = {}

    def add(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "message_start":
            self.message = dict(event["message"])
            self.message["content"] = list(self.message.get("content") or [])
            self.message["usage"] = dict(self.message.get("usage") or {})
            return
        message = self.message
        if message is None:
            raise ValueError(f"a {kind} event before message_start")
        if kind == "content_block_start":
            message["content"].append(dict(event["content_block"]))
        elif kind == "content_block_delta":
            self._delta(message["content"][event["index"]], event["index"], event["delta"])
        elif kind == "message_delta":
            delta, usage = event.get("delta") or {}, event.get("usage") or {}
            for key in ("stop_reason", "stop_sequence", "stop_details"):
                message[key] = delta.get(key)
            if delta.get("container") is not None:
                message["container"] = delta["container"]
            if event.get("context_management") is not None:
                message["context_management"] = event["context_management"]
            message["usage"]["output_tokens"] = usage.get("output_tokens")
            message["usage"].update({k: usage[k] for k in USAGE_TOTALS if usage.get(k) is not None})

    def _delta(self, block: dict[str, Any], index: int, delta: dict[str, Any]) -> None:
        kind, of = delta.get("type"), block.get("type")
        if kind == "text_delta" and of == "text":
            block["text"] = block.get("text", "") + delta["text"]
        elif kind == "input_json_delta" and of in TOOL_INPUT_BLOCKS:
            self.tool_json[index] = self.tool_json.get(index, "") + delta["partial_json"]
        elif kind == "citations_delta" and of == "text":
            block["citations"] = [*(block.get("citations") or []), delta["citation"]]
        elif kind == "thinking_delta" and of == "thinking":
            block["thinking"] = block.get("thinking", "") + delta["thinking"]
        elif kind == "signature_delta" and of == "thinking":
            block["signature"] = delta["signature"]
        elif kind == "compaction_delta" and of == "compaction":
            block["content"] = delta.get("content")
            block["encrypted_content"] = delta.get("encrypted_content")

    def finish(self, truncated: bool) -> tuple[dict[str, Any], str]:
        """The message, its tool inputs parsed strictly, and the first input that is not a JSON object
        ("" when all are). A cut-off reply's cut input stays {}: it is never run."""
        assert self.message is not None
        bad = ""
        for index, text in self.tool_json.items():
            try:
                value = json.loads(text) if text else {}
            except ValueError as e:
                value, bad = {}, bad or f"{e}: {text[:200]}"
            if not isinstance(value, dict):
                value, bad = {}, bad or f"not an object: {text[:200]}"
            self.message["content"][index]["input"] = value
        return self.message, "" if truncated else bad


def plain_block(block: dict[str, Any]) -> Block:
    """A reply's content block as the conversation stores it: as received (an empty text block, a
    tool call's `caller`, a text's `citations` included: the docs ask for turns sent back exactly), only
    None-valued fields left out, as the SDK's `exclude_none` dump leaves them out."""
    kind = block.get("type")
    if kind == "text":
        text: TextBlock = {"type": "text", "text": block.get("text") or ""}
        if block.get("citations"):
            text["citations"] = list(block["citations"])
        return text
    if kind == "tool_use":
        call: ToolUseBlock = {
            "type": "tool_use",
            "id": block["id"],
            "name": block["name"],
            "input": block.get("input", {}),
        }
        if block.get("caller") is not None:
            call["caller"] = dict(without_nones(block["caller"]))
        return call
    if kind == "thinking":  # sent back exactly as received, signature included
        return {
            "type": "thinking",
            "thinking": block.get("thinking", ""),
            "signature": block.get("signature", ""),
        }
    if kind == "redacted_thinking":
        return {"type": "redacted_thinking", "data": block.get("data", "")}
    return cast(Block, dict(without_nones(block)))


def without_nones(value: object) -> Any:
    """`value` with every None-valued key dropped, at every depth (as the SDK's `exclude_none` dumps)."""
    if isinstance(value, dict):
        return {k: without_nones(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_nones(v) for v in value]
    return value


def copy_usage(api_usage: dict[str, Any], usage: Usage) -> None:
    """The API's usage into `usage`. When the API compacted the conversation in this request, the top-level
    counts are the reply's own pass (the context it was made from) and `iterations` lists every billed
    pass, the summarising one included: the bill is their sum."""
    iterations = api_usage.get("iterations")
    if not iterations:
        return _copy_counts(api_usage, usage)
    top = Usage()
    _copy_counts(api_usage, top)
    for it in iterations:
        part = Usage()
        _copy_counts(it, part)
        usage.add(part)
    usage.context_tokens = top.prompt_tokens


def _copy_counts(api_usage: dict[str, Any], usage: Usage) -> None:
    usage.input_tokens = api_usage.get("input_tokens") or 0
    usage.output_tokens = api_usage.get("output_tokens") or 0
    usage.cache_read_tokens = api_usage.get("cache_read_input_tokens") or 0
    usage.cache_write_tokens = api_usage.get("cache_creation_input_tokens") or 0
    creation = api_usage.get("cache_creation") or {}
    usage.cache_write_1h_tokens = creation.get("ephemeral_1h_input_tokens") or 0
