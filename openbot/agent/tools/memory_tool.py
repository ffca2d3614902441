"""The `memory` tool: the agent keeps notes for its future sessions on this project (MemoryStore)."""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict, cast

from openbot.agent.models.base import ToolSpec
from openbot.agent.tools.base import ToolContext, ToolFailed, ToolOutput
from openbot.errors import UsageError
from openbot.state.memory import MEMORY_LIMIT, NOTE_LIMIT

SPEC = ToolSpec(
    name="memory",
    description=(
        "Save or remove a note in your memory for this project. Memory is shown to you at the start of "
        "every future session: keep what a later session needs (how to build and test, conventions, "
        "decisions, unfinished work), one topic per key, and remove notes that are no longer true. "
        f"A note holds up to {NOTE_LIMIT // 1024} kB and the whole memory up to {MEMORY_LIMIT // 1024} kB."
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


class MemoryInput(TypedDict):  # what SPEC's schema admits (the registry checks it before `run`)
    action: Literal["set", "remove"]
    key: str
    value: NotRequired[str]


class MemoryTool:
    spec = SPEC

    def run(self, input: dict[str, object], ctx: ToolContext, tool_use_id: str) -> ToolOutput:
        if ctx.memory is None:
            raise ToolFailed("memory is not available in this session")
        args = cast(MemoryInput, input)
        key = args["key"]
        if args["action"] == "set":
            if "value" not in args:
                raise ToolFailed("action set needs a value")
            try:
                ctx.memory.set(key, args["value"])
            except UsageError as e:  # too long, memory full, a bad key: the model can fix each of them
                raise ToolFailed(f"not saved: {e.one_line()}") from None
            return ToolOutput(f"Saved memory {key!r} ({len(args['value'])} characters).")
        if not ctx.memory.remove(key):
            known = ", ".join(repr(k) for k in sorted(ctx.memory.load())) or "none"
            raise ToolFailed(f"there is no memory {key!r}; the keys are: {known}")
        return ToolOutput(f"Removed memory {key!r}.")
