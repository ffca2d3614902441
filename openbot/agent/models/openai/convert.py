"""The stored conversation (Anthropic Messages format) as the OpenAI wire protocols want it, and back.

    stored block                         Responses input item              Chat Completions message
    user text                            {"role": "user", content}         {"role": "user", content}
    tool_result                          function_call_output              {"role": "tool", tool_call_id}
    assistant text                       {"role": "assistant", content}    assistant content
    tool_use                             function_call (call_id = id)      assistant tool_calls[]
    openai_reasoning {"item": {...}}     the reasoning item, as received   (left out)
    thinking / redacted_thinking         (left out: Claude's)              (left out)

`openai_reasoning` is openbot's own block: a Responses reasoning item kept in the conversation exactly as
it came (with its `encrypted_content`) so it goes back with the function calls it led to — the API
requires that, and with `store: false` nothing else remembers it — and so a resumed run sends it again.
"""

from __future__ import annotations

import json

from openbot.agent.models.base import ToolSpec
from openbot.state.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock, blocks_of


def _text_of(content: str | list[TextBlock]) -> str:
    """A tool_result's content (a string, or text blocks) as one string."""
    if isinstance(content, str):
        return content
    return "\n".join(b["text"] for b in content if b["type"] == "text" and b["text"])


def _result_output(block: ToolResultBlock) -> str:
    text = _text_of(block["content"]) or "(no output)"
    return f"[error] {text}" if block.get("is_error") else text


def _arguments(block: ToolUseBlock) -> str:
    return json.dumps(block["input"] or {}, ensure_ascii=False)


def responses_input(messages: list[Message]) -> list[dict[str, object]]:
    """The Responses API `input` for the stored messages (system goes in `instructions`)."""
    items: list[dict[str, object]] = []
    for message in messages:
        role = message["role"]
        for block in blocks_of(message):
            if block["type"] == "text" and block["text"]:
                item: dict[str, object] = {"role": role, "content": block["text"]}
                if role == "assistant":
                    item = {"type": "message", **item}
                    if block.get("openai_phase"):
                        item["phase"] = block.get("openai_phase")
                items.append(item)
            elif block["type"] == "tool_result":
                call_id = block["tool_use_id"]
                items.append(
                    {"type": "function_call_output", "call_id": call_id, "output": _result_output(block)}
                )
            elif block["type"] == "tool_use":
                items.append(
                    {
                        "type": "function_call",
                        "call_id": block["id"],
                        "name": block["name"],
                        "arguments": _arguments(block),
                    }
                )
            elif block["type"] == "openai_reasoning" and isinstance(block["item"], dict):
                items.append(dict(block["item"]))
    return items


def chat_messages(system: str, messages: list[Message]) -> list[dict[str, object]]:
    """The Chat Completions `messages`: tool results first (they answer the previous assistant turn)."""
    out: list[dict[str, object]] = [{"role": "system", "content": system}] if system else []
    for message in messages:
        blocks = blocks_of(message)
        text = "\n".join(b["text"] for b in blocks if b["type"] == "text" and b["text"])
        if message["role"] == "assistant":
            calls = [
                {
                    "id": b["id"],
                    "type": "function",
                    "function": {"name": b["name"], "arguments": _arguments(b)},
                }
                for b in blocks
                if b["type"] == "tool_use"
            ]
            entry: dict[str, object] = {"role": "assistant", "content": text or None}
            if calls:
                entry["tool_calls"] = calls
            if text or calls:
                out.append(entry)
            continue
        for b in blocks:
            if b["type"] == "tool_result":
                out.append({"role": "tool", "tool_call_id": b["tool_use_id"], "content": _result_output(b)})
        if text:
            out.append({"role": "user", "content": text})
    return out


def responses_tools(tools: list[ToolSpec]) -> list[dict[str, object]]:
    # strict stays off: openbot's schemas have optional properties, which strict mode forbids.
    return [
        {
            "type": "function",
            "name": t.name,
            "description": t.description,
            "parameters": t.input_schema,
            "strict": False,
        }
        for t in tools
    ]


def chat_tools(tools: list[ToolSpec]) -> list[dict[str, object]]:
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": t.input_schema},
        }
        for t in tools
    ]


def parse_arguments(raw: str) -> tuple[dict[str, object], str]:
    """(the input, "") for a call's arguments, or ({}, why) when they are not a JSON object."""
    try:
        value = json.loads(raw) if raw.strip() else {}
    except ValueError as e:
        return {}, f"{e}: {raw[:200]}"
    if not isinstance(value, dict):
        return {}, f"not a JSON object: {raw[:200]}"
    return value, ""
