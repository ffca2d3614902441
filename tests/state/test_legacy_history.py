"""The Rust openbot's sessions read next to openbot's own: numbering, conversion, and damage as a note."""

from __future__ import annotations

import json
from pathlib import Path

from openbot.state.history import History
from openbot.state.legacy_history import events
from tests.legacy_fixture import EVENTS, OLD_THREAD, THREAD, record, session_dir


def _history(tmp_path: Path) -> tuple[History, Path]:
    root = tmp_path / "history"
    (root).mkdir()
    (root / f"{OLD_THREAD}.json").write_text(json.dumps(record(1, OLD_THREAD, "old", new=False)))
    session_dir(root, 2, "two")
    return History(root), root


def test_listed_by_number_and_openbot_numbering_continues(tmp_path: Path) -> None:
    h, root = _history(tmp_path)
    assert [m.session_number for m in h.recent(10)] == [2, 1]
    assert h.last_number() == 2
    own = h.create_session("run-1", "claude-x")
    assert own.session_number == 3
    listed = h.recent(10)
    assert [(m.session_number, m.status) for m in listed] == [(3, "running"), (2, "legacy"), (1, "legacy")]
    assert h.get("1").session_id == OLD_THREAD and h.get(f"{THREAD}-s2").response_summary == "two"
    two = h.get("2")
    # Codex counts cached input inside input_tokens: openbot's kinds split them.
    assert two.tokens == {"input": 8000, "cache_read": 16000, "output": 1800, "cache_write": 0}
    assert two.duration_secs == 97.0 and two.action == "" and two.command_count == 2


def test_events_are_converted(tmp_path: Path) -> None:
    h, root = _history(tmp_path)
    records = list(h.events(f"{THREAD}-s2"))
    kinds = [r["type"] for r in records]
    assert kinds == ["notice", "message", "command", "token_count", "command", "token_count", "message"]
    assert records[1]["text"] == "Looking at the test suite."
    first, second = records[3], records[5]  # running totals become increments
    assert (first["input"], first["cache_read"], first["output"]) == (4000, 6000, 500)
    assert (second["input"], second["cache_read"], second["output"]) == (4000, 10000, 1300)
    assert "no events" in next(iter(h.events(OLD_THREAD)))["message"]


def test_totals_that_start_again_are_taken_as_they_are(tmp_path: Path) -> None:
    reset = [*EVENTS, {**EVENTS[3], "input_tokens": 100, "cached_input_tokens": 0, "output_tokens": 7}]
    session_dir(tmp_path, 5, "x", reset)
    last = [r for r in events(tmp_path, f"{THREAD}-s5") if r["type"] == "token_count"][-1]
    assert (last["input"], last["output"]) == (100, 7)


def test_damaged_files_are_notes_never_errors(tmp_path: Path) -> None:
    h, root = _history(tmp_path)
    (root / f"{OLD_THREAD}.json").write_text("{not json")
    bad = session_dir(root, 3, "three")
    (bad / "metadata.json").write_text(json.dumps({**record(3, bad.name, "x"), "duration_secs": "long"}))
    (bad / "events.jsonl").write_bytes(b'{"type": "message", "content": "hi"}\n\xff\xfe garbage\n[1]\n')
    (root / f"{THREAD}-s4").mkdir()  # no metadata.json at all
    listed = {m.session_id: m for m in h.recent(10)}
    assert listed[OLD_THREAD].status == "unknown" and "not valid JSON" in listed[OLD_THREAD].error
    assert listed[OLD_THREAD].session_number == 0
    assert listed[bad.name].status == "unknown" and "not an integer" in listed[bad.name].error
    assert "metadata.json is missing" in listed[f"{THREAD}-s4"].error
    assert listed[f"{THREAD}-s4"].session_number == 4
    notes = [r["message"] for r in h.events(bad.name) if r["type"] == "notice"]
    assert any("line 2" in n and "damaged" in n for n in notes) and any("line 3" in n for n in notes)


def test_openbot_names_and_other_files_are_not_taken_for_rust_ones(tmp_path: Path) -> None:
    root = tmp_path / "history"
    root.mkdir()
    (root / ".lock").write_text("")
    (root / "notes.txt").write_text("")
    (root / "transcript.html").write_text("")
    h = History(root)
    own = h.create_session("run-1", "claude-x")
    assert [m.session_id for m in h.recent(10)] == [own.session_id]
