"""The `memory` tool: the agent keeps notes for its future sessions on this project (MemoryStore)."""

from __future__ import annotations

from typing import Any

from openbot.agent.models.base import ToolSpec
from openbot.agent.tools.base import ToolContext, ToolFailed, ToolOutput

SPEC = ToolSpec(
    name="memory",
    description=(
        "Save or remove a note in your memory for this project. Memory is shown to you at the start of "
        "every future session: keep what a later session needs (how to build and test, conventions, "
        "decisions, unfinished work), one topic per key, and remove notes that are no longer true."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["set", "remove"]},
            "key": {"type": "string", "description": "A short one-line name for the note."},
            "value": {"type": "string", "description": "set: the note (replaces any earlier value)."},
        },
        "required": ["action", "key"],
        "additionalProperties": False,
    },
)


class MemoryTool:
    spec = SPEC

    def run(self, input: dict[str, Any], ctx: ToolContext, tool_use_id: str) -> ToolOutput:
        if ctx.memory is None:
            raise ToolFailed("memory is not available in this session")
        key = input["key"]
        if input["action"] == "set":
            if "value" not in input:
                raise ToolFailed("action set needs a value")
            ctx.memory.set(key, input["value"])
            return ToolOutput(f"Saved memory {key!r} ({len(input['value'])} characters).")
        if not ctx.memory.remove(key):
            known = ", ".join(repr(k) for k in sorted(ctx.memory.load())) or "none"
            raise ToolFailed(f"there is no memory {key!r}; the keys are: {known}")
        return ToolOutput(f"Removed memory {key!r}.")
