"""What the turn does with each reply, by stop reason (docs: "Stop reasons and fallback").

    tool_use / end_turn / stop_sequence   run the tool calls, or end the turn
    pause_turn                            keep the reply and call again: the model continues it
    max_tokens, model_context_window_exceeded
        with a tool call                  (the backend already asked again with a larger limit) nothing in it
                                          runs; the reply is dropped and the model is asked for smaller steps
        text only                         kept, and the model is asked to continue
    refusal                               nothing in it runs, it is not kept; the run ends `refused` (exit 4)
    a defect (tool input not JSON; a call written as text that cannot be read or names no tool here)
                                          nothing runs, not kept; the model is told and asked again
    spent on thinking (no text, no call)  not kept; the model is asked again for text or a tool call
    a call written as text that is not the whole reply (quoted, negated, in prose: agent/textreply.py)
                                          nothing runs; kept; the model is told the rule and asked again
    text, no call, before anything ran    kept; the model is told nothing ran and asked to call a tool or
                                          session_complete (then `Stuck`: the session ends `limit`)
    text, no call, after tools ran        the turn ends: the model ended its iteration (the prompt says so)
    nothing at all, end_turn              the turn ends, as the API's docs describe such a reply

A dropped reply was never part of the conversation, so nothing sent is edited. Consecutive re-asks are
bounded (MAX_REASKS): a model that keeps failing ends its turn instead of looping.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from openbot.agent.models.base import ModelReply
from openbot.agent.textreply import NOT_RUN_RULE
from openbot.events import NoticeKind

MAX_REASKS = 3
Action = Literal["run", "continue", "reask", "refused"]


@dataclass(frozen=True)
class Verdict:
    action: Action
    keep: bool = True  # append the reply to the conversation
    note: str = ""  # for "reask": what the model is told
    event: NoticeKind | None = None  # the Notice kind that records it


NO_CALL = (
    "[openbot] Your reply called no tool, so nothing was run. Continue the task with a tool call, or call "
    "session_complete (with a summary and an action) when the task is done or cannot be done."
)
TEXT_FORMAT = (
    " To call a tool in text, reply with one fenced block per call and nothing after it, exactly:\n```json\n"
    '{"name": "shell", "arguments": {"command": "ls"}}\n```'
)


def judge(reply: ModelReply, *, acted: bool = True, text_calls: bool = False, not_run: str = "") -> Verdict:
    """What to do with `reply`. `acted`: a tool ran in this turn (or runs from this reply); `text_calls`:
    calls written as text are accepted, so the model is shown that format when it called nothing;
    `not_run`: why a call written in the reply's text does not run."""
    if reply.stop_reason == "refusal":
        return Verdict("refused", keep=False, event="refusal")
    if reply.defect:
        note = (
            f"[openbot] Your last reply could not be used: {reply.defect}. Nothing in it was run. "
            "Send the tool call again with a valid JSON object as its input."
        )
        return Verdict("reask", keep=False, note=note, event="invalid_tool_input")
    if reply.truncated and reply.tool_uses:
        note = (
            f"[openbot] Your last reply was cut off ({reply.stop_reason}) before its tool call was complete, "
            "so nothing in it was run. Work in smaller steps: split large edits and file writes into "
            "several calls, and keep each reply short."
        )
        return Verdict("reask", keep=False, note=note, event="truncated_tool_call")
    if reply.truncated and not reply.empty:
        note = f"[openbot] Your reply was cut off ({reply.stop_reason}). Continue where it stopped."
        return Verdict("reask", keep=True, note=note, event="truncated_reply")
    if reply.empty and reply.content and reply.stop_reason != "pause_turn":
        note = (
            "[openbot] Your last reply had no text and no tool call. Continue the task: call a tool, or "
            "answer in text (call session_complete when the task is done)."
        )
        return Verdict("reask", keep=False, note=note, event="empty_reply")
    if reply.stop_reason == "pause_turn" and not reply.tool_uses:
        return Verdict("continue", keep=True, event="pause_turn")
    if not_run and not reply.tool_uses:
        note = f"[openbot] Nothing in your last reply was run ({not_run}): {NOT_RUN_RULE}."
        return Verdict("reask", keep=True, note=note, event="text_call_not_run")
    if not acted and not reply.tool_uses and not reply.empty:
        note = NO_CALL + (TEXT_FORMAT if text_calls else "")
        return Verdict("reask", keep=True, note=note, event="no_tool_call")
    return Verdict("run")


def said(verdict: Verdict, reply: ModelReply) -> str:
    """The notice's words for a verdict."""
    if verdict.action == "refused":
        return refusal_text(reply)
    if verdict.action == "continue":
        return "the API paused the turn; the model continues it"
    return verdict.note.removeprefix("[openbot] ")


def refusal_text(reply: ModelReply) -> str:
    """One line for the run's reason: the category and the explanation from `stop_details`."""
    details = reply.stop_details or {}
    category = details.get("category") or "no category given"
    explanation = details.get("explanation") or "no explanation given"
    return f"the model refused ({category}): {explanation}"
