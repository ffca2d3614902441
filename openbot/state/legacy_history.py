"""Sessions the Rust openbot recorded, read-only, listed next to openbot's own (docs/LEGACY.md).

The Rust tool (montanaflynn/openbot at cf3b7f2, src/history.rs and src/runner.rs) kept, in the same
`workspaces/<slug>/history/` directory openbot uses:

    <codex thread uuid>-s<N>/metadata.json   a SessionRecord (session_number, started_at, duration_secs,
    <codex thread uuid>-s<N>/events.jsonl    model, prompt/response_summary, action, tokens, command_count);
                                             events {"type": "message"|"command"|"token_count", ...}
    <id>.json                                the older one-file SessionRecord (commit c0c91c3), no events

`History` lists them by their session numbers, so openbot's own numbering continues after them. Nothing
here ever writes: a damaged file is shown as a one-line note (status "unknown" or a `notice` record in
the transcript), never an error. Rust `message` events are streamed deltas and `token_count` events the
Codex thread's running totals, so the transcript joins the one and turns the other into increments.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

STATUS = "legacy"  # shown for a Rust openbot session; never written
FORMAT = "a Rust openbot session (read-only)"
_DIR_RE = re.compile(r"^[0-9A-Za-z][0-9A-Za-z_-]*-s(\d{1,9})$")
_FILE_RE = re.compile(r"^([0-9A-Za-z][0-9A-Za-z_-]*)\.json$")
_LIMIT = 1024 * 1024  # a SessionRecord is a few hundred bytes; anything near this is not one
_TOKENS = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens")


def dir_number(name: str) -> int | None:
    m = _DIR_RE.match(name)
    return int(m.group(1)) if m else None


def _load(path: Path, what: str = "") -> object:
    """The JSON in `path`; ValueError (with a short reason naming `what`) when it cannot be read as JSON."""
    what = what or path.name
    try:
        with open(path, "rb") as f:
            raw = f.read(_LIMIT + 1)
    except FileNotFoundError:
        raise ValueError(f"{what} is missing") from None
    except OSError as e:
        raise ValueError(f"{what} cannot be read ({e.strerror})") from None
    if len(raw) > _LIMIT:
        raise ValueError(f"{what} is larger than {_LIMIT // 1024} kB")
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError) as e:
        raise ValueError(f"{what} is not valid JSON ({e})") from None


def names(root: Path, entries: list[str]) -> list[tuple[int, str]]:
    """(number, name) of the Rust sessions among `entries` (the names in `root`); a one-file record is named
    by its file's stem and numbered from inside (0 when it cannot be read)."""
    found = []
    for entry in entries:
        if (n := dir_number(entry)) is not None:
            found.append((n, entry))
        elif (m := _FILE_RE.match(entry)) and dir_number(m.group(1)) is None:
            found.append((_record_number(root / entry), m.group(1)))
    return found


def _record_number(path: Path) -> int:
    try:
        record = _load(path)
    except ValueError:
        return 0
    number: Any = record.get("session_number") if isinstance(record, dict) else None
    return int(number) if _int(number) and number >= 0 else 0


def _path(root: Path, name: str) -> Path:
    return root / name / "metadata.json" if dir_number(name) is not None else root / f"{name}.json"


def _tokens(raw: object) -> dict[str, int]:
    """openbot's token kinds from a TokenSnapshot: Codex counts cached input inside input_tokens."""
    if raw is None:
        return {}
    if not isinstance(raw, dict) or not all(_int(raw.get(k, 0)) for k in _TOKENS):
        raise ValueError(f"field 'tokens' has the wrong type: {raw!r}")
    cached = raw.get("cached_input_tokens", 0)
    return {
        "input": max(raw.get("input_tokens", 0) - cached, 0),
        "cache_read": cached,
        "output": raw.get("output_tokens", 0),
        "cache_write": 0,
    }


def _action(text: str) -> str:
    """openbot's word for the Rust tool's action text (runner.rs: "review branch …", "merged … into …",
    "merge failed; branch … available for manual merge", "discarded (branch … kept)")."""
    for prefix, word in (("merged ", "merge"), ("merge failed", "review"), ("discarded", "discard")):
        if text.startswith(prefix):
            return word
    return "review" if text.startswith("review") else ""


def _int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def meta_dict(root: Path, name: str) -> dict[str, Any]:
    """A SessionMeta-shaped dict for one Rust session; damage gives status "unknown" and the reason."""
    path = _path(root, name)
    base: dict[str, object] = {
        "session_id": name,
        "session_number": dir_number(name) or 0,
        "run_id": "",
        "started_at": "",
        "legacy": f"{FORMAT}; no cost was recorded: {path}",
    }
    try:
        what = "metadata.json" if dir_number(name) is not None else "the file"
        return {**base, **_convert(_load(path, what))}
    except ValueError as e:
        return {**base, "status": "unknown", "error": f"damaged Rust openbot record: {e} ({path})"}


def _convert(record: object) -> dict[str, object]:
    if not isinstance(record, dict):
        raise ValueError("expected a JSON object")
    text = {k: record.get(k) for k in ("started_at", "model", "prompt_summary", "response_summary")}
    for key, value in text.items():
        if value is not None and not isinstance(value, str):
            raise ValueError(f"field {key!r} has the wrong type: {value!r}")
    number, secs = record.get("session_number"), record.get("duration_secs", 0)
    count, action = record.get("command_count"), record.get("action")
    if not _int(number) or not _int(secs) or (count is not None and not _int(count)):
        raise ValueError("field 'session_number', 'duration_secs' or 'command_count' is not an integer")
    if action is not None and not isinstance(action, str):
        raise ValueError(f"field 'action' has the wrong type: {action!r}")
    out: dict[str, object] = {k: v for k, v in text.items() if v is not None}
    out.update(session_number=number, duration_secs=float(secs), status=STATUS, action=_action(action or ""))
    if action and action != out["action"]:
        out["action_detail"] = action  # the Rust tool's own words, e.g. the review commands
    out.update(tokens=_tokens(record.get("tokens")), command_count=count or 0)
    return out


def events(root: Path, name: str) -> Iterator[dict[str, object]]:
    """The session's events as openbot records: deltas joined into messages, running token totals as
    increments, a damaged line as a `notice`. A one-file record has no events (a notice says so)."""
    if dir_number(name) is None:
        yield _note("an older Rust openbot record: a summary only, no events were kept")
        return
    yield _note("recorded by the Rust openbot: messages, commands and token counts only (read-only)")
    path = root / name / "events.jsonl"
    text: list[str] = []
    last = dict.fromkeys(_TOKENS, 0)
    for record in _records(path):
        if record.get("type") == "message" and isinstance(record.get("content"), str):
            text.append(record["content"])
            continue
        if text:
            yield {"type": "message", "role": "assistant", "text": "".join(text)}
            text = []
        yield _event(record, last)
    if text:
        yield {"type": "message", "role": "assistant", "text": "".join(text)}


def _records(path: Path) -> Iterator[dict[str, Any]]:
    try:
        f = open(path, "rb")
    except FileNotFoundError:
        return
    except OSError as e:
        yield _note(f"{path} cannot be read ({e.strerror})")
        return
    with f:
        for number, raw in enumerate(f, 1):
            try:
                record = json.loads(raw)
            except (ValueError, UnicodeDecodeError):
                record = None
            if isinstance(record, dict):
                yield record
            elif raw.strip():
                yield _note(f"line {number} of {path} is damaged; skipped")


def _event(record: dict[str, Any], last: dict[str, int]) -> dict[str, Any]:
    if record.get("type") == "command":
        return {**record, "output": ""}  # the Rust tool kept no output
    if record.get("type") != "token_count" or not all(_int(record.get(k)) for k in _TOKENS):
        return record  # unknown or damaged: shown as it is
    now = {k: record[k] for k in _TOKENS}
    step = {k: now[k] - last[k] for k in _TOKENS}
    if any(v < 0 for v in step.values()):  # a new Codex thread started its totals again
        step = now
    last.update(now)
    cached = step["cached_input_tokens"]
    return {
        "type": "token_count",
        "model": "",
        "input": max(step["input_tokens"] - cached, 0),
        "cache_read": cached,
        "output": step["output_tokens"],
        "cache_write": 0,
    }


def _note(message: str) -> dict[str, object]:
    return {"type": "notice", "kind": "legacy", "message": message}
