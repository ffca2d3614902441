"""A reply's text taken as tool calls: whether it is read at all, whether it *is* a call, what goes back.

    reads_text   tool_protocol "text": always; "native": never; "auto": only from a model on a Chat
                 Completions server (ollama:, llamacpp:, openai-compatible:, …; the scripted backend
                 too) that has made no native call in this conversation — never from Claude or from
                 OpenAI's own API, whose calls come in the API's own field
    is_a_call    the calls textcalls.find_calls found run only when the reply is those calls: nothing
                 after or between them but whitespace, and before them at most one short line that is
                 not quoted (`>`) and does not say not to run them (NOT_RUN_RULE). A call quoted,
                 negated or embedded in prose runs nothing: a model that read hostile text and
                 repeated it has not acted on it
    results_text what the model reads back, each result under a plain heading it has no reason to copy

docs/MODELS.md ("Small local models: tool calls written as text") states the rule for users.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from openbot.agent.models.base import ModelReply
from openbot.agent.textcalls import Found, TextCall, find_calls
from openbot.agent.tools.base import Tool
from openbot.config.model_names import parse_model
from openbot.events import EventSink, Notice
from openbot.state.messages import Message, ToolResultBlock, ToolUseBlock, blocks_of

LEAD_MAX = 200  # characters: "one short line" before the call
# A lead-in whose last sentence holds one of these says the call is not to run (or is only an example).
_NEGATED = re.compile(r"\b(?:not|never|cannot|refus\w*|avoid\w*|example)\b|n['’]t\b", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?;])\s+")
NOT_RUN_RULE = (
    "a tool call written as text runs only when it is the whole reply: at most one short line before "
    "it, not quoted with `>`, not saying it is not to be run, and nothing after it"
)


@dataclass
class TextReading:
    """What a reply's text comes to: the calls to run, a defect (a call that cannot be read), or why the
    call-shaped text in it runs nothing (`not_run`). `taught`: the text format is accepted here."""

    uses: list[ToolUseBlock] = field(default_factory=list)
    defect: str = ""
    not_run: str = ""
    taught: bool = False


def reads_text(protocol: str, model: str, messages: list[Message]) -> bool:
    """Whether calls written in a reply's text are read from `model` (its name as the backend gives it)."""
    if protocol != "auto":
        return protocol == "text"
    if parse_model(model).backend not in ("chat", "scripted"):
        return False
    return not any(
        b["type"] == "tool_use" for m in messages if m["role"] == "assistant" for b in blocks_of(m)
    )


def is_a_call(text: str, spans: list[tuple[int, int]]) -> str:
    """ "" when `text` is the calls at `spans`; otherwise why they do not run."""
    spans = sorted(spans)
    after = [text[end:start] for (_, end), (start, _) in zip(spans, spans[1:], strict=False)]
    if any(part.strip() for part in [*after, text[spans[-1][1] :]]):
        return "there is text after the call"
    lead = text[: spans[0][0]]
    lines = [line for line in lead.splitlines() if line.strip()]
    if any(line.lstrip().startswith(">") for line in lines):
        return "the call is quoted"
    if len(lines) > 1 or len(lead.strip()) > LEAD_MAX:
        return "the call is embedded in prose"
    if lines and _NEGATED.search(_SENTENCE.split(lines[0].strip())[-1]):
        return "the line before the call says it is not to be run"
    return ""


def read_reply(
    reply: ModelReply, protocol: str, model: str, messages: list[Message], tools: list[Tool], step: int,
    sink: EventSink,
) -> TextReading:  # fmt: skip
    """The calls `reply` wrote as text, as the turn runs them. What looked like a call but cannot be used
    makes the whole reply unusable (a defect), as a native call with bad input does."""
    taught = reads_text(protocol, model, messages)
    if not taught or reply.tool_uses or reply.truncated or not reply.text.strip():
        return TextReading(taught=taught)
    found = find_calls(reply.text, [t.spec.name for t in tools])
    if found.problems:
        defect = ("you wrote a tool call as text, but " + "; ".join(found.problems))[:500]
        return TextReading(defect=defect, taught=True)
    if not found.calls:
        return TextReading(taught=True)
    why = is_a_call(reply.text, found.spans)
    if why:  # the turn's verdict says so (a `text_call_not_run` notice) and tells the model the rule
        return TextReading(not_run=why, taught=True)
    data = {"calls": [c.name for c in found.calls], "forms": found.forms}
    sink.emit(Notice(kind="text_tool_calls", message=summary(found), data=data))
    return TextReading(as_tool_uses(found.calls, step), taught=True)


def as_tool_uses(calls: list[TextCall], step: int) -> list[ToolUseBlock]:
    """The calls as the turn runs them (ids of openbot's making: the reply itself stays text)."""
    return [
        {"type": "tool_use", "id": f"text_{step}_{n}", "name": c.name, "input": c.input}
        for n, c in enumerate(calls, 1)
    ]


def results_text(uses: list[ToolUseBlock], results: list[ToolResultBlock]) -> str:
    """What the model reads back after calls it wrote as text: one user message, each result under a
    plain heading (the conversation holds no tool_use blocks for them, so no tool_result blocks either).
    Not a bracketed tag: a small model copied `[openbot] Your shell call …` into its next call."""
    by_id = {r["tool_use_id"]: r for r in results}
    parts = []
    for use in uses:
        result = by_id.get(use["id"])
        content = "" if result is None else result["content"]
        text = content if isinstance(content, str) else "\n".join(b["text"] for b in content)
        failed = " (it failed)" if result is not None and result.get("is_error") else ""
        parts.append(f"Output of the {use['name']} call{failed}:\n{text}")
    return "\n\n".join(parts)


def summary(found: Found) -> str:
    names = ", ".join(c.name for c in found.calls)
    n = len(found.calls)
    return (
        f"ran {n} tool call{'s' if n > 1 else ''} the model wrote as text ({', '.join(found.forms)}): {names}"
    )
