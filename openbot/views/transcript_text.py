"""The transcript as plain text, in its two shapes: blocks for a person (`openbot history --session`) and
numbered-by-position lines for the model (the session_history tool, which pages through them).

Both read the same entries (openbot.views.transcript), so they show the same events the same way; they
differ in decoration and in how much command output they keep (a person gets more of it).
"""

from __future__ import annotations

from collections.abc import Iterable

from openbot.views.escapes import one_line
from openbot.views.fields import excerpt, lines_of
from openbot.views.transcript import (
    Boundary,
    Called,
    Consulted,
    Entry,
    Happened,
    Other,
    Ran,
    Returned,
    Said,
)

# Of one command's output a person sees the first and the last lines (errors are usually at the end); the
# model sees fewer and can read the full-output file. The rest is in events.jsonl.
PERSON_HEAD = PERSON_TAIL = 10
MODEL_HEAD, MODEL_TAIL = 3, 6
MODEL_LINE_CHARS = 500


def _indent(lines: Iterable[str], prefix: str = "    ") -> str:
    return "\n".join(prefix + line for line in lines)


def _person_command(e: Ran) -> str:
    head = f"$ {e.command}  [{e.status}, {e.seconds:.1f}s]"
    first, hidden, last = excerpt(lines_of(e.output), PERSON_HEAD, PERSON_TAIL)
    body = [*first, *([f"… {hidden} lines …"] if hidden else []), *last]
    if e.full_output_path:
        body.append(f"(full output: {e.full_output_path})")
    return head + ("\n" + _indent(body) if body else "")


def person_block(e: Entry) -> str | None:
    """One entry as `history --session` shows it; None for what it leaves out (tokens, shell calls)."""
    match e:
        case Said(streamed=False):
            return f"{e.who}:\n{_indent(lines_of(e.text))}"
        case Ran(done=True):
            return _person_command(e)
        case Called() if e.tool != "shell":  # shell calls show as their command
            return f"→ {e.tool} {one_line(e.input_json, 100)}"
        case Returned(is_error=True):
            return f"! {e.tool} failed: {one_line(e.content, 200)}"
        case Consulted():
            status = "error" if e.is_error else "ok"
            return f"  [{e.name}: {status}, {e.seconds:.1f}s] {one_line(e.output, 200)}"
        case Happened(kind="error"):
            return f"error: {e.text}"
        case Happened(kind="notice"):
            return f"[{e.label or 'notice'}] {e.text}"
        case Happened(kind="verification" | "network" | "feedback"):
            return f"[{e.kind}] {e.text}"
        case Boundary(kind="turn_aborted"):
            return f"turn aborted: {e.outcome} {e.detail}".rstrip()
        case Boundary(kind="session_ended"):
            return f"session ended: {e.outcome} {e.detail}".rstrip()
        case Other(damaged=True):
            return e.damage_note
    return None


def person_text(entries: Iterable[Entry]) -> str:
    shown = [block for e in entries if (block := person_block(e)) is not None]
    return "\n".join(shown) if shown else "(no events recorded)"


def _model_command(e: Ran) -> list[str]:
    first, *rest = lines_of(e.command) or [""]
    lines = [f"$ {first}    ({e.status}, {e.seconds:.1f} s, {e.tool_use_id})"]
    lines += [f"  > {line}" for line in rest]
    head, hidden, tail = excerpt(lines_of(e.output), MODEL_HEAD, MODEL_TAIL)
    return lines + [f"  | {line}" for line in [*head, *([f"[... {hidden} lines]"] if hidden else []), *tail]]


def _model_lines(e: Entry, text: bool, commands: bool, everything: bool) -> list[str]:
    match e:
        case Said(streamed=False) if text:
            return [f"[{e.who}]", *lines_of(e.text)]
        case Ran(done=True) if commands:
            return _model_command(e)
        case Other(damaged=True):
            return [e.damage_note]
    if not everything:
        return []
    match e:
        case Called() if e.tool != "shell":
            return [f"[tool {e.tool}] {e.input_json}"]
        case Returned(is_error=True):
            return [f"[tool {e.tool} failed] {one_line(e.content, 300)}"]
        case Consulted():
            return [f"[mcp {e.name} {'failed' if e.is_error else 'ok'}] {one_line(e.output, 300)}"]
        case Happened(kind="error" | "notice" | "verification" | "network" | "feedback"):
            return [f"[{e.kind}] {one_line(e.text, 300)}"]
        case Boundary(kind="session_ended" | "turn_aborted"):
            return [f"[{e.kind}] {e.outcome} {e.detail}".rstrip()]
    return []


def model_lines(entries: Iterable[Entry], section: str) -> list[str]:
    """The transcript lines of one section (response, commands or all), each cut to MODEL_LINE_CHARS."""
    everything = section == "all"
    text, commands = everything or section == "response", everything or section == "commands"
    out = [line for e in entries for line in _model_lines(e, text, commands, everything)]
    return [line if len(line) <= MODEL_LINE_CHARS else line[:MODEL_LINE_CHARS] + " [...]" for line in out]
