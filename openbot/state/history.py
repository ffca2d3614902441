"""Session history of one bot in one project: one directory per session under `paths.history_dir`.

    <root>/<session_id>/metadata.json   what `openbot history` lists (rewritten atomically)
    <root>/<session_id>/events.jsonl    every event of the session (openbot.events)

The session directories are the truth: there is no index to go stale, so users may copy, prune or restore
folders by hand. `session_id` is `<number:06d>-<UTC %Y%m%dT%H%M%SZ>`; listing sorts names by their number
and reads only the metadata it shows, so thousands of sessions stay cheap. A session whose metadata.json
is missing or damaged is listed with status "unknown", never a crash.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, get_args

from openbot import paths
from openbot.errors import NotFoundError, UsageError
from openbot.files import loads_strict, locked
from openbot.state import legacy_history
from openbot.state.records import write_record  # padded: a final state fits on a full disk
from openbot.stops import Status
from openbot.views.escapes import shorten

SESSION_STATUSES = get_args(Status)
UNKNOWN = "unknown"  # shown for a session whose metadata.json cannot be read; never written
TOKEN_KINDS = ("input", "output", "cache_read", "cache_write")
_SESSION_RE = re.compile(r"^(\d{6,})-(\d{8}T\d{6}Z)$")
_ID_TIME = "%Y%m%dT%H%M%SZ"


def _zero_tokens() -> dict[str, int]:
    return dict.fromkeys(TOKEN_KINDS, 0)


@dataclass
class SessionMeta:
    session_id: str
    session_number: int
    run_id: str
    started_at: str  # UTC ISO-8601
    duration_secs: float = 0.0
    model: str = ""
    status: str = "running"  # one of SESSION_STATUSES
    prompt_summary: str = ""
    response_summary: str = ""
    action: str = ""  # what happened to the work: merge | review | discard | ""
    branch: str = ""
    base: str = ""
    tokens: dict[str, int] = field(default_factory=_zero_tokens)
    cost_usd: float = 0.0
    command_count: int = 0
    error: str = ""
    wip_commit: str = ""
    extra: dict[str, object] = field(default_factory=dict)  # unknown keys from disk, written back untouched

    @property
    def total_tokens(self) -> int:
        return sum(self.tokens.values())

    def to_dict(self) -> dict[str, object]:
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "extra"}
        return {**self.extra, **d, "tokens": dict(self.tokens)}

    @classmethod
    def from_dict(cls, d: dict[str, object]) -> SessionMeta:
        """Build from a metadata.json object; ValueError when a known field has the wrong type."""
        if not isinstance(d, dict):
            raise ValueError("expected a JSON object")
        known = {f.name: f for f in dataclasses.fields(cls) if f.name != "extra"}
        values: dict[str, Any] = {}
        for name, f in known.items():
            if name not in d:
                continue
            value, want = d[name], f.type
            if want == "float" and isinstance(value, int) and not isinstance(value, bool):
                value = float(value)
            ok = {
                "str": isinstance(value, str),
                "int": isinstance(value, int) and not isinstance(value, bool),
                "float": isinstance(value, float),
                "dict[str, int]": isinstance(value, dict)
                and all(isinstance(v, int) and not isinstance(v, bool) for v in value.values()),
            }[str(want)]
            if not ok:
                raise ValueError(f"field {name!r} has the wrong type: {value!r}")
            values[name] = value
        for name in ("session_id", "session_number", "run_id", "started_at"):
            if name not in values:
                raise ValueError(f"field {name!r} is missing")
        values["tokens"] = {**_zero_tokens(), **values.get("tokens", {})}
        extra = {k: v for k, v in d.items() if k not in known}
        return cls(**values, extra=extra)


def _number(name: str) -> int | None:
    m = _SESSION_RE.match(name)
    return int(m.group(1)) if m else None


def _unreadable(session_id: str, why: str) -> SessionMeta:
    """What a damaged session shows: its number and start time come from the directory name."""
    m = _SESSION_RE.match(session_id)
    started = ""
    if m:
        started = (
            datetime.strptime(m.group(2), _ID_TIME).replace(tzinfo=UTC).isoformat().replace("+00:00", "Z")
        )
    number = int(m.group(1)) if m else 0
    return SessionMeta(session_id, number, "", started, status=UNKNOWN, error=why)


def _legacy(root: Path, session_id: str) -> SessionMeta:
    d = legacy_history.meta_dict(root, session_id)
    try:
        return SessionMeta.from_dict(d)
    except ValueError as e:  # cannot happen for what meta_dict builds; a note, never a crash
        return SessionMeta(session_id, d["session_number"], "", "", status=UNKNOWN, error=str(e))


class History:
    """The sessions of one bot in one project; `root` is `paths.history_dir(bot, project)`.

    Creates nothing until `create_session`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._listing: tuple[tuple[int, int], list[tuple[int, str]]] | None = None

    def _names(self) -> list[tuple[int, str]]:
        """(number, session_id) of every session directory, oldest first; names only, no file is read.

        The listing is reused while the directory's mtime and link count are unchanged (adding, removing or
        renaming a session changes them), so a long run does not re-sort thousands of names each iteration."""
        try:
            st = os.stat(self.root)
        except FileNotFoundError:
            return []
        stamp = (st.st_mtime_ns, st.st_nlink)
        if self._listing is not None and self._listing[0] == stamp:
            return self._listing[1]
        names = os.listdir(self.root)
        found = sorted((n, name) for name in names if (n := _number(name)) is not None)
        found = sorted([*found, *legacy_history.names(self.root, names)])  # the Rust openbot's sessions
        self._listing = (stamp, found)
        return found

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        paths.make_private_dir(self.root)
        with locked(self.root / ".lock"):
            yield

    def create_session(
        self, run_id: str, model: str, branch: str = "", base: str = "", prompt_summary: str = ""
    ) -> SessionMeta:
        """Number a new session (max existing + 1; the lock keeps parallel runs apart) and record it."""
        with self._locked():
            names = self._names()
            number = (names[-1][0] if names else 0) + 1
            now = datetime.now(UTC)
            session_id = f"{number:06d}-{now.strftime(_ID_TIME)}"
            self.session_dir(session_id).mkdir(mode=0o700)
            st = os.stat(self.root)  # our own mkdir changed the stamp: keep the cached listing current
            self._listing = ((st.st_mtime_ns, st.st_nlink), [*names, (number, session_id)])
            meta = SessionMeta(
                session_id=session_id,
                session_number=number,
                run_id=run_id,
                started_at=now.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
                model=model,
                branch=branch,
                base=base,
                prompt_summary=prompt_summary,
            )
            self.save(meta)
        return meta

    def session_dir(self, session_id: str) -> Path:
        return self.root / session_id

    def events_path(self, session_id: str) -> Path:
        return self.session_dir(session_id) / "events.jsonl"

    def save(self, meta: SessionMeta, *, final: bool = False) -> None:
        """Write metadata.json; `final` (the end of a run) still succeeds on a full disk (write_record)."""
        if meta.status not in SESSION_STATUSES:
            raise UsageError(f"session status {meta.status!r} is not one of {', '.join(SESSION_STATUSES)}")
        text = json.dumps(meta.to_dict(), ensure_ascii=False, indent=2)
        write_record(self.session_dir(meta.session_id) / "metadata.json", text, final=final)

    def _read(self, session_id: str) -> SessionMeta:
        if _number(session_id) is None:
            return _legacy(self.root, session_id)
        path = self.session_dir(session_id) / "metadata.json"
        try:
            return SessionMeta.from_dict(loads_strict(path.read_bytes()))
        except FileNotFoundError:
            return _unreadable(session_id, "metadata.json is missing")
        except (OSError, ValueError, UnicodeDecodeError) as e:
            why = str(e).splitlines()[0] if str(e) else type(e).__name__
            return _unreadable(session_id, f"damaged record {path}: {why} (restore or delete it)")

    def recount(self, meta: SessionMeta) -> None:
        """A session whose process died never recorded its end: its time, tokens, cost and commands from
        what its events.jsonl holds, and a summary that says what happened, not the task it was given."""
        tokens, cost, commands, last, called = _zero_tokens(), 0.0, [], "", ""
        for e in self.events(meta.session_id):
            last = str(e.get("ts") or last)
            if e.get("type") == "token_count":
                for kind in tokens:
                    tokens[kind] += int(e.get(kind) or 0)
                cost += float(e.get("cost_usd") or 0.0)
            elif e.get("type") == "command":
                commands.append(called := shorten(str(e.get("command", "")), 80))
            elif e.get("type") == "tool_call" and e.get("name") == "shell":
                called = shorten(str((e.get("input") or {}).get("command", "")), 80)
        try:
            took = datetime.fromisoformat(last) - datetime.fromisoformat(meta.started_at)
            meta.duration_secs = max(meta.duration_secs, round(took.total_seconds(), 3))
        except ValueError:
            pass  # no event, or a time that does not read: the duration stays unknown
        meta.tokens, meta.cost_usd = tokens, round(cost, 6)
        meta.command_count = max(meta.command_count, len(commands))
        n = len(commands)
        running = called and (not commands or commands[-1] != called)
        meta.response_summary = f"the openbot process died after {n} command{'' if n == 1 else 's'}" + (
            f", while running: {called}" if running else f" (the last: {commands[-1]})" if commands else ""
        )

    def events(self, session_id: str) -> Iterator[dict[str, Any]]:
        """The session's event records; a Rust openbot session's as openbot records (legacy_history)."""
        if _number(session_id) is None:
            return legacy_history.events(self.root, session_id)
        from openbot.events import read_events

        return read_events(self.events_path(session_id))

    def recent(self, n: int) -> list[SessionMeta]:
        """The newest `n` sessions, newest first; reads exactly those metadata files."""
        if n <= 0:
            return []
        return [self._read(name) for _, name in reversed(self._names()[-n:])]

    def get(self, ref: str) -> SessionMeta:
        """A session by its id or its number ("12")."""
        names = self._names()
        if ref.isdigit():
            match = [name for n, name in names if n == int(ref)]
        else:
            match = [name for _, name in names if name == ref]
        if not match:
            last = names[-1][0] if names else 0
            hint = f"the last session is {last}" if last else "this bot has no sessions in this project"
            raise NotFoundError(f"no session {ref!r} in {self.root}", hint=hint)
        return self._read(match[-1])

    def last_number(self) -> int:
        names = self._names()
        return names[-1][0] if names else 0
