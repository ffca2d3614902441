"""Events are data: one frozen dataclass per event type, one serializer, one writer, one reader:
`events.jsonl` (docs/EVENTS.md): `type`, `ts`, `seq`; redacted, one `os.write` each; a torn tail is read."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol


@dataclass(frozen=True)
class Event:
    type: ClassVar[str] = "event"
    persist: ClassVar[bool] = True  # False: shown live, never written to events.jsonl


@dataclass(frozen=True)
class SessionStarted(Event):
    type: ClassVar[str] = "session_started"
    session_id: str
    session_number: int
    run_id: str
    model: str
    branch: str = ""


@dataclass(frozen=True)
class SessionEnded(Event):
    type: ClassVar[str] = "session_ended"
    status: str
    reason: str = ""


@dataclass(frozen=True)
class TurnStarted(Event):
    type: ClassVar[str] = "turn_started"
    model: str


@dataclass(frozen=True)
class TurnCompleted(Event):
    type: ClassVar[str] = "turn_completed"
    steps: int
    stop_reason: str


@dataclass(frozen=True)
class TurnAborted(Event):
    type: ClassVar[str] = "turn_aborted"
    reason: Literal["step_limit", "stuck"]  # openbot.stops.CutShort (events imports nothing of openbot)
    detail: str = ""


@dataclass(frozen=True)
class TextDelta(Event):
    type: ClassVar[str] = "text_delta"
    persist: ClassVar[bool] = False
    text: str


@dataclass(frozen=True)
class Message(Event):
    type: ClassVar[str] = "message"
    text: str
    role: str = "assistant"


@dataclass(frozen=True)
class UserInput(Event):
    type: ClassVar[str] = "user_input"
    text: str


@dataclass(frozen=True)
class ToolCall(Event):
    type: ClassVar[str] = "tool_call"
    id: str
    name: str
    input: dict[str, object]


@dataclass(frozen=True)
class CommandStarted(Event):
    type: ClassVar[str] = "command_started"
    persist: ClassVar[bool] = False
    command: str
    full_output_path: str = ""  # where its output is written as it runs (the live view shows the tail)


@dataclass(frozen=True)
class Command(Event):
    type: ClassVar[str] = "command"
    tool_use_id: str
    command: str
    exit_code: int | None  # None: killed (timeout or cancellation)
    duration_ms: int
    output: str  # the compacted text the model saw
    output_bytes: int
    full_output_path: str = ""  # set when the output was compacted
    timed_out: bool = False


@dataclass(frozen=True)
class ToolResult(Event):
    type: ClassVar[str] = "tool_result"
    tool_use_id: str
    name: str
    is_error: bool
    content: str


@dataclass(frozen=True)
class TokenCount(Event):
    type: ClassVar[str] = "token_count"
    model: str
    input: int
    output: int
    cache_read: int
    cache_write: int
    cost_usd: float
    cost_known: bool = True  # False: the model has no known price, cost_usd is 0 and shown as "?"


@dataclass(frozen=True)
class Retry(Event):
    type: ClassVar[str] = "retry"
    attempt: int
    cause: str
    wait_secs: float


@dataclass(frozen=True)
class Error(Event):
    type: ClassVar[str] = "error"
    message: str
    kind: str = ""


NoticeKind = Literal[  # docs/EVENTS.md says what each one's `data` holds and which log keeps it
    "context_compacted",
    "repeated_call",
    "nothing_changed",
    "not_verified",
    "reply_truncated",
    "truncated_tool_call",
    "truncated_reply",
    "invalid_tool_input",
    "empty_reply",
    "no_tool_call",
    "text_tool_calls",
    "text_call_not_run",
    "pause_turn",
    "refusal",
    "prompt_too_long",
    "model_switched",
    "thinking_dropped",
    "sandbox_unconfined",
    "dead_run_marked",
    "worktree_swept",
    "wip_commit",
    "worktree_kept",
    "empty_branch_deleted",
    "skill_skipped",
    "skills_kept",
    "mcp_server_started",
    "mcp_server_failed",
    "mcp_server_crashed",
    "mcp_server_restarted",
    "setup_started",
    "setup_done",
    "setup_cache_repaired",
    "submodule",
    "editable_install",
    "hooks_changed",
    "wip_left_out",
    "run_note",
    "run_warning",
    "sleeping",
    "notified",
]


@dataclass(frozen=True)
class Notice(Event):  # something openbot did or decided on the user's behalf (a WIP commit, a sweep)
    type: ClassVar[str] = "notice"
    kind: NoticeKind
    message: str
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class McpCall(Event):
    """A call to a tool of an MCP server (docs/MCP.md); `output` is what the model saw, redacted."""

    type: ClassVar[str] = "mcp_call"
    tool_use_id: str
    server: str
    tool: str
    arguments: dict[str, object]
    duration_ms: int
    is_error: bool
    output: str
    output_bytes: int
    full_output_path: str = ""  # set when the output was compacted


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def to_record(event: Event, seq: int, ts: str | None = None) -> dict[str, object]:
    """The one serializer: `type`, `ts`, `seq`, then the event's own fields."""
    return {"type": event.type, "ts": ts or now_iso(), "seq": seq, **asdict(event)}


class EventSink(Protocol):
    def emit(self, event: Event) -> None: ...


class NullSink:
    def emit(self, event: Event) -> None: ...  # drops every event


class TeeSink:  # fans one event out to several sinks (the log writer and the live view)
    def __init__(self, *sinks: EventSink) -> None:
        self.sinks = list(sinks)

    def emit(self, event: Event) -> None:
        for sink in self.sinks:
            sink.emit(event)


class ListSink:  # keeps events in memory: the scripted dry-run display, tests
    def __init__(self) -> None:
        self.events: list[Event] = []

    def emit(self, event: Event) -> None:
        self.events.append(event)


def truncate_torn_tail(path: Path) -> int:
    """Cut a torn last line (a crash mid-write); the seq of the last intact record (0 if none)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return 0
    end = data.rfind(b"\n") + 1
    if end != len(data):
        os.truncate(path, end)
    last = data[:end].rstrip(b"\n").rsplit(b"\n", 1)[-1]
    try:  # a damaged last record (a hand edit: "seq": [1], 1e999) is counted, never a crash
        return int(json.loads(last).get("seq", 0)) if last else 0
    except (ValueError, AttributeError, TypeError, OverflowError):
        return data[:end].count(b"\n")


class EventLog:
    """Appends persisted events to one events.jsonl; `redact` runs on the serialized line."""

    def __init__(self, path: Path, redact: Callable[[str], str] = lambda s: s) -> None:
        self.path, self.redact, self._lock = path, redact, threading.Lock()  # the proxy's threads emit too
        path.parent.mkdir(parents=True, exist_ok=True)
        self.seq = truncate_torn_tail(path)
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)

    def emit(self, event: Event) -> None:
        if not event.persist:
            return
        with self._lock:
            self.seq += 1
            line = json.dumps(to_record(event, self.seq), ensure_ascii=False)
            os.write(self._fd, (self.redact(line) + "\n").encode())

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def read_events(path: Path) -> Iterator[dict[str, object]]:
    """Every intact record (a JSON object); torn, undecodable, non-object and NaN lines are skipped."""
    try:
        f = open(path, "rb")
    except FileNotFoundError:
        return
    with f:
        for raw in f:
            if not raw.endswith(b"\n"):
                return
            try:
                record = json.loads(raw, parse_constant=bytes.fromhex)
            except ValueError:
                continue
            if isinstance(record, dict):  # a line of other JSON (a list, a string) is no event either
                yield record
