"""The `session_history` tool: the agent looks back at its earlier sessions on this project.

`list` shows one line per session; `view` renders one session's events.jsonl as lines (messages,
commands with exit codes and output excerpts, as openbot.views.transcript_text words them for the model)
and pages from the end, since the end of a session (what it concluded, where it stopped) is what a later
session usually needs first.
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict, cast

from openbot.agent.models.base import ToolSpec
from openbot.agent.tools.base import ToolContext, ToolFailed, ToolOutput
from openbot.views.escapes import shorten
from openbot.views.transcript import entries
from openbot.views.transcript_text import model_lines

LIST_LIMIT = 10
VIEW_LIMIT = 60
MAX_LIMIT = 500

SPEC = ToolSpec(
    name="session_history",
    description=(
        "Look at your earlier sessions on this project. list: the most recent sessions (number, date, "
        "status, outcome, summary). view: one session's transcript — section response (your messages), "
        "commands (commands with exit codes and output excerpts) or all — shown from the end: offset 0 is "
        "the last `limit` lines; a larger offset goes further back."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["list", "view"]},
            "session_number": {"type": "integer", "description": "view: which session."},
            "offset": {"type": "integer", "description": "view: lines back from the end (default 0)."},
            "limit": {"type": "integer", "description": "How many sessions (list, 10) or lines (view, 60)."},
            "section": {"type": "string", "enum": ["response", "commands", "all"]},
        },
        "required": ["action"],
        "additionalProperties": False,
    },
)


class HistoryInput(TypedDict):  # what SPEC's schema admits (the registry checks it before `run`)
    action: Literal["list", "view"]
    session_number: NotRequired[int]
    offset: NotRequired[int]
    limit: NotRequired[int]
    section: NotRequired[Literal["response", "commands", "all"]]


class SessionHistoryTool:
    spec = SPEC

    def run(self, input: dict[str, object], ctx: ToolContext, tool_use_id: str) -> ToolOutput:
        if ctx.history is None:
            raise ToolFailed("session history is not available in this session")
        args = cast(HistoryInput, input)
        if args["action"] == "list":
            return ToolOutput(self.list(ctx, _limit(args, LIST_LIMIT)))
        if "session_number" not in args:
            raise ToolFailed("view needs session_number (see action list)")
        return ToolOutput(self.view(ctx, args["session_number"], args))

    def list(self, ctx: ToolContext, limit: int) -> str:
        assert ctx.history is not None
        sessions = ctx.history.recent(limit)
        if not sessions:
            return "No sessions yet."
        lines = []
        for m in sessions:
            when = m.started_at[:16].replace("T", " ")
            summary = shorten(m.response_summary or m.prompt_summary or "", 120)
            lines.append(f"#{m.session_number}  {when}  {m.status}  {m.action or '-'}  {summary}")
        return "\n".join(lines)

    def view(self, ctx: ToolContext, number: int, args: HistoryInput) -> str:
        assert ctx.history is not None
        section = args.get("section", "all")
        offset, limit = args.get("offset", 0), _limit(args, VIEW_LIMIT)
        if offset < 0:
            raise ToolFailed(f"offset must be 0 or more, got {offset}")
        meta = ctx.history.get(str(number))
        lines = model_lines(entries(ctx.history.events(meta.session_id)), section)
        total = len(lines)
        if not total:
            return f"Session {number} ({meta.status}) has no {section} lines."
        end = max(total - offset, 0)
        start = max(end - limit, 0)
        header = f"Session {number} ({meta.status}, {section}): lines {start + 1}–{end} of {total}"
        if start > 0:
            header += f"; use offset={offset + (end - start)} for earlier"
        if end == 0:
            return f"Session {number} has only {total} {section} lines; offset {offset} is past the start."
        return "\n".join([header, *lines[start:end]])


def _limit(args: HistoryInput, default: int) -> int:
    limit = args.get("limit", default)
    if limit <= 0:
        raise ToolFailed(f"limit must be positive, got {limit}")
    return min(limit, MAX_LIMIT)
