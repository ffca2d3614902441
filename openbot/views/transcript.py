"""One reading of a session for every view: event records (or live events) → typed transcript entries.

`history --session`, the session_history tool, the live view and the HTML export all show a session
through these entries, so they agree on which events exist, what a command's status is called, which
fields say what a tool call does and how long output is cut; each view only decorates (transcript_text
for the two plain-text views, live and html for theirs). Records are read tolerantly (a hand-edited or
older events.jsonl must still show), and every string an entry carries has been through
`escapes.visible`: the agent wrote it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from openbot.views.escapes import visible
from openbot.views.fields import Damaged as _Damaged
from openbot.views.fields import flag as _b
from openbot.views.fields import integer as _i
from openbot.views.fields import json_text, network_text, reported
from openbot.views.fields import mapping as _map
from openbot.views.fields import number as _n
from openbot.views.fields import text as _s

if TYPE_CHECKING:
    from openbot.events import Event

GIST_KEYS = ("command", "action", "path", "key")  # the tool-call fields that say what the call does


@dataclass(frozen=True, kw_only=True)
class Entry:
    """Where an entry came from: the record's time and sequence number (empty for live events)."""

    ts: str = ""
    seq: int | None = None


@dataclass(frozen=True)
class Said(Entry):
    """Words: the model's (`message`, or a streamed `text_delta`) or the user's (`user_input`)."""

    who: str  # the message's role, or "user"
    text: str
    streamed: bool = False


@dataclass(frozen=True)
class Ran(Entry):
    """A shell command that finished (`command`), or one that just started (`command_started`)."""

    command: str
    done: bool = True
    exit_code: int | None = None  # None: killed (timeout or cancellation)
    timed_out: bool = False
    duration_ms: float = 0.0
    output: str = ""
    output_bytes: int | None = None
    full_output_path: str = ""
    tool_use_id: str = ""

    @property
    def status(self) -> str:
        if self.exit_code is None:
            return "timed out" if self.timed_out else "killed"
        return f"exit {self.exit_code}"

    @property
    def failed(self) -> bool:
        return self.timed_out or self.exit_code != 0

    @property
    def seconds(self) -> float:
        return self.duration_ms / 1000


@dataclass(frozen=True)
class Called(Entry):
    """A tool call; `input` is as the model sent it (use `gist` or `input_json` to show it)."""

    tool: str
    input: Mapping[str, object]

    @property
    def gist(self) -> str:
        return visible(" ".join(str(self.input[k]) for k in GIST_KEYS if self.input.get(k) is not None))

    @property
    def input_json(self) -> str:
        return json_text(self.input)

    @property
    def only_a_command(self) -> bool:
        """A shell call that says nothing its command line does not (no options beyond a timeout)."""
        return self.tool == "shell" and set(self.input) <= {"command", "timeout_secs"}


@dataclass(frozen=True)
class Returned(Entry):
    """A tool's result as the model saw it."""

    tool: str
    is_error: bool
    content: str


@dataclass(frozen=True)
class Consulted(Entry):
    """A call to an MCP server's tool (`mcp_call`): what was asked and what came back (docs/MCP.md)."""

    server: str
    tool: str
    arguments: Mapping[str, object]
    is_error: bool
    duration_ms: float = 0.0
    output: str = ""
    output_bytes: int | None = None
    full_output_path: str = ""

    @property
    def name(self) -> str:
        return f"{self.server}__{self.tool}"

    @property
    def seconds(self) -> float:
        return self.duration_ms / 1000


@dataclass(frozen=True)
class Happened(Entry):
    """Something that went wrong or that openbot did: `error`, `notice` or `retry`, with its label (the
    error's kind, the notice's kind, the retry's cause) and text (for a retry: which one, and when)."""

    kind: str
    label: str
    text: str
    data: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class Spent(Entry):
    """One model call's tokens and cost (`token_count`)."""

    model: str
    tokens: Mapping[str, int]  # input, output, cache_read, cache_write
    cost_usd: float
    cost_known: bool = True

    @property
    def total(self) -> int:
        return sum(self.tokens.values())


@dataclass(frozen=True)
class Boundary(Entry):
    """Where a session or a turn starts or ends: `session_started`, `session_ended`, `turn_started`,
    `turn_completed` or `turn_aborted`. `outcome` is the session's status, the turn's stop reason or why
    it was aborted; `detail` says more."""

    kind: str
    outcome: str = ""
    detail: str = ""
    model: str = ""
    steps: int = 0
    session_id: str = ""
    session_number: int = 0
    branch: str = ""


@dataclass(frozen=True)
class Other(Entry):
    """A record of a type this version does not know, or a damaged one; shown as its fields."""

    type: str
    fields: Mapping[str, object]
    damaged: bool = False

    @property
    def damage_note(self) -> str:
        return f"[damaged {self.type} event, seq {'?' if self.seq is None else self.seq}]"


def _ran(r: Mapping[str, object], done: bool) -> Ran:
    return Ran(
        _s(r, "command"),
        done=done,
        exit_code=_i(r, "exit_code"),
        timed_out=_b(r, "timed_out"),
        duration_ms=_n(r, "duration_ms"),
        output=_s(r, "output"),
        output_bytes=_i(r, "output_bytes"),
        full_output_path=_s(r, "full_output_path"),
        tool_use_id=_s(r, "tool_use_id"),
    )


def _boundary(r: Mapping[str, object], kind: str) -> Boundary:
    outcome = {"session_ended": "status", "turn_completed": "stop_reason", "turn_aborted": "reason"}
    return Boundary(
        kind,
        outcome=_s(r, outcome.get(kind, "")),
        detail=_s(r, "reason" if kind == "session_ended" else "detail"),
        model=_s(r, "model"),
        steps=_i(r, "steps") or 0,
        session_id=_s(r, "session_id"),
        session_number=_i(r, "session_number") or 0,
        branch=_s(r, "branch"),
    )


def _spent(r: Mapping[str, object]) -> Spent:
    tokens = {k: _i(r, k) or 0 for k in ("input", "output", "cache_read", "cache_write")}
    return Spent(_s(r, "model"), tokens, _n(r, "cost_usd"), r.get("cost_known") is not False)


def _verification(r: Mapping[str, object]) -> Happened:
    """openbot's own check of the work (`verification`): label "passed" or "failed"."""
    passed, sha = _b(r, "passed"), _s(r, "sha")[:12] or "?"
    attempt = f"attempt {_i(r, 'attempt')} of {_i(r, 'attempts')}"
    if passed:
        text = f"verified at {sha}: every check passed ({attempt})"
    else:
        text = f"not verified at {sha} ({attempt}): {_s(r, 'reason')}"
        text += "".join(f"\n    {line}" for line in _s(r, "tail").splitlines())  # why: the output's end
    return Happened("verification", "passed" if passed else "failed", text, _fields(r))


def _parse(r: Mapping[str, object], kind: str) -> Entry:
    match kind:
        case "message" | "text_delta":
            return Said(_s(r, "role", "assistant"), _s(r, "text"), streamed=kind == "text_delta")
        case "user_input":
            return Said("user", _s(r, "text"))
        case "command" | "command_started":
            return _ran(r, done=kind == "command")
        case "tool_call":
            return Called(_s(r, "name"), _map(r, "input"))
        case "tool_result":
            return Returned(_s(r, "name"), _b(r, "is_error"), _s(r, "content"))
        case "mcp_call":
            return Consulted(
                _s(r, "server"),
                _s(r, "tool"),
                _map(r, "arguments"),
                _b(r, "is_error"),
                duration_ms=_n(r, "duration_ms"),
                output=_s(r, "output"),
                output_bytes=_i(r, "output_bytes"),
                full_output_path=_s(r, "full_output_path"),
            )
        case "error":
            return Happened("error", _s(r, "kind"), _s(r, "message"))
        case "notice":
            return Happened("notice", _s(r, "kind"), _s(r, "message"), _map(r, "data"))
        case "retry":
            wait = _n(r, "wait_secs")
            when = f"in {wait:.1f}s" if wait else "at once"
            return Happened("retry", _s(r, "cause"), f"re-sent {when} (retry {_i(r, 'attempt')})")
        case "verification" | "review" | "feedback":  # labels: passed (approved, all addressed), failed
            return _verification(r) if kind == "verification" else Happened(kind, *reported(kind, r))
        case "network":  # docs/SANDBOX.md, "Network by name"
            return Happened(
                "network", "allowed" if _b(r, "allowed") else "refused", network_text(r), _fields(r)
            )
        case "token_count":
            return _spent(r)
        case "session_started" | "session_ended" | "turn_started" | "turn_completed" | "turn_aborted":
            return _boundary(r, kind)
    return Other(kind, _fields(r))


def _fields(record: Mapping[str, object]) -> dict[str, object]:
    return {k: v for k, v in record.items() if k not in ("type", "ts", "seq")}


def entry(record: Mapping[str, object]) -> Entry:
    """One events.jsonl record as an entry. A record of a known type with a field of the wrong type is
    shown as damaged (`Other` with `damaged`), never guessed at and never an error."""
    kind, ts, seq = record.get("type"), record.get("ts"), record.get("seq")
    kind = visible(kind) if isinstance(kind, str) else "event"
    try:
        parsed = _parse(record, kind)
    except _Damaged:
        parsed = Other(kind, _fields(record), damaged=True)
    ts = visible(ts) if isinstance(ts, str) else ""
    return dataclasses.replace(
        parsed, ts=ts, seq=seq if isinstance(seq, int) and not isinstance(seq, bool) else None
    )


def entries(records: Iterable[Mapping[str, object]]) -> list[Entry]:
    return [entry(r) for r in records if isinstance(r, Mapping)]


def live_entry(event: Event) -> Entry:
    """A live event (persisted or not) as the entry its record would give."""
    return _parse({"type": event.type, **dataclasses.asdict(event)}, event.type)
