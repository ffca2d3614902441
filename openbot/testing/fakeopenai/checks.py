"""What FakeOpenAI checks in a request before serving it, as the real servers do (a 400 otherwise).

Responses: a `function_call_output` answers a `function_call` sent earlier in the same input; a function
call the server made after a reasoning item comes back with that reasoning item before it (OpenAI's
"provided without its required 'reasoning' item"), and a reasoning item comes back byte-identical to what
the server issued (its `encrypted_content` is checked). Chat Completions: every assistant `tool_calls`
entry is answered by a `tool` message, and every `tool` message answers one.
"""

from __future__ import annotations

import json
from typing import Any

REASONING_INPUT_KEYS = {"type", "id", "summary", "content", "encrypted_content", "status"}


def responses_problem(body: dict[str, Any], issued: dict[str, str], reasoning_of: dict[str, str]) -> str:
    """`issued`: encrypted_content → the reasoning item's id; `reasoning_of`: call_id → encrypted_content."""
    calls: set[str] = set()
    seen_reasoning: set[str] = set()
    for n, item in enumerate(body.get("input") or []):
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "reasoning":
            unknown = sorted(set(item) - REASONING_INPUT_KEYS)
            if unknown:
                return f"Unknown parameter: 'input[{n}].{unknown[0]}'."
            enc = item.get("encrypted_content")
            if enc is None:  # by id alone: with `store: false` the API kept nothing to find it by
                return (
                    f"Item with id '{item.get('id')}' not found. Items are not persisted when `store` is "
                    "set to false. Try again with `store` set to true, or remove this item from your input."
                )
            if enc not in issued or issued[enc] != item.get("id"):
                return f"input[{n}]: the reasoning item's encrypted_content could not be verified"
            seen_reasoning.add(str(enc))
        elif kind == "function_call":
            needed = reasoning_of.get(str(item.get("call_id")))
            if needed and needed not in seen_reasoning:
                return (
                    f"Item 'input[{n}]' of type 'function_call' was provided without its required "
                    "'reasoning' item"
                )
            calls.add(str(item.get("call_id")))
        elif kind == "function_call_output" and item.get("call_id") not in calls:
            return f"No tool call found for function call output with call_id {item.get('call_id')}."
    return ""


def chat_problem(body: dict[str, Any]) -> str:
    open_calls: list[str] = []
    for n, msg in enumerate(body.get("messages") or []):
        role = msg.get("role")
        if role == "tool":
            if msg.get("tool_call_id") not in open_calls:
                return (
                    f"messages[{n}]: messages with role 'tool' must be a response to a preceding tool_calls"
                )
            open_calls.remove(msg["tool_call_id"])
            continue
        if open_calls:
            return (
                "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
                f"'tool_call_id'. The following tool_call_ids did not have response messages: {open_calls}"
            )
        if role == "assistant":
            for call in msg.get("tool_calls") or []:
                try:  # what a client sends back must be JSON, whatever the model wrote
                    json.loads(call["function"]["arguments"])
                except ValueError:
                    return f"messages[{n}]: tool call {call['id']} has arguments that are not valid JSON"
                open_calls.append(call["id"])
    return ""


def listed(model_id: str, extra: dict[str, object]) -> dict[str, object]:
    """A model as `GET /v1/models` lists it (with its extra fields, e.g. vLLM's `max_model_len`)."""
    shown = {k: v for k, v in extra.items() if k != "tools"}
    return {"id": model_id, "object": "model", "created": 1_700_000_000, "owned_by": "fake", **shown}


def canon(obj: object) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
