"""The `session_complete` tool: the agent declares its work done and says what should happen to it."""

from __future__ import annotations

from typing import Literal, TypedDict, cast

from openbot.agent.models.base import ToolSpec
from openbot.agent.tools.base import ToolContext, ToolFailed, ToolOutput
from openbot.stops import ACTIONS, Completion

SPEC = ToolSpec(
    name="session_complete",
    description=(
        "Call this once, when the task is finished (or cannot be finished), after committing your work. "
        "summary: what you did and what is left, for the user and your future sessions. action: merge "
        "(the work is done and verified), review (a human should look before merging), or discard "
        "(nothing worth keeping). The run ends after this turn."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "summary": {"type": "string", "description": "What was done, verified, and left to do."},
            "action": {"type": "string", "enum": list(ACTIONS)},
        },
        "required": ["summary", "action"],
        "additionalProperties": False,
    },
)


DONE = (
    "Session marked complete; the run ends after this turn, unless the bot has verify commands and "
    "openbot's check of your committed work fails: then the next message says what failed."
)


class CompleteInput(TypedDict):  # what SPEC's schema admits (the registry checks it before `run`)
    summary: str
    action: Literal["merge", "review", "discard"]


class SessionCompleteTool:
    spec = SPEC

    def run(self, input: dict[str, object], ctx: ToolContext, tool_use_id: str) -> ToolOutput:
        # The schema (checked by the registry) already enforces both fields and the action enum.
        args = cast(CompleteInput, input)
        if not args["summary"].strip():
            raise ToolFailed("summary must not be empty: say what was done and what is left")
        done = Completion(args["summary"], args["action"])
        return ToolOutput(DONE, completion=done)
