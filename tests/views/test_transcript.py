"""The one transcript reading: live events and stored records give the same entries, every view words a
command's fate the same way, and damaged records are shown rather than crashing a view."""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path

from openbot import events as ev
from openbot.events import EventLog, read_events
from openbot.views.html import render_session_html
from openbot.views.live import LiveView
from openbot.views.transcript import Other, Ran, Said, entries, entry, live_entry
from openbot.views.transcript_text import model_lines, person_text
from tests.views.test_export_html import EVENTS


def test_a_live_event_and_its_stored_record_read_the_same(tmp_path: Path) -> None:
    log = EventLog(tmp_path / "events.jsonl")
    for event in EVENTS:
        log.emit(event)
    log.close()
    stored = entries(read_events(tmp_path / "events.jsonl"))
    assert [dataclasses.replace(e, ts="", seq=None) for e in stored] == [live_entry(e) for e in EVENTS]
    assert [e.seq for e in stored] == list(range(1, len(EVENTS) + 1)) and all(e.ts for e in stored)
    assert not [e for e in stored if isinstance(e, Other)]
    assert live_entry(ev.TextDelta(text="he")) == Said("assistant", "he", streamed=True)
    assert live_entry(ev.CommandStarted(command="make")) == Ran("make", done=False)


def test_every_view_words_a_commands_fate_alike() -> None:
    timed_out = ev.Command("t1", "sleep 9", None, 500, "", 0, timed_out=True)
    killed = ev.Command("t2", "sleep 8", None, 400, "", 0)
    records = [{"type": e.type, **dataclasses.asdict(e)} for e in (timed_out, killed)]
    live = io.StringIO()
    view = LiveView(live, stream_text=False)
    for event in (timed_out, killed):
        view.emit(event)
    person = person_text(entries(records))
    model = "\n".join(model_lines(entries(records), "commands"))
    page = render_session_html({}, records)
    for text in (live.getvalue(), person, model, page):
        assert "timed out" in text and "killed" in text, text


def test_damaged_records_are_shown_as_damaged_not_guessed_at() -> None:
    junk = [
        {"type": "command", "seq": 4, "command": ["not", "text"], "exit_code": "1", "duration_ms": "slow"},
        {"type": "tool_call", "name": "edit", "input": "not an object"},
        {"type": "notice", "kind": None, "message": "m", "data": [1]},
        {"type": "retry", "attempt": "x", "wait_secs": None},
        {"type": "session_ended", "status": 3, "seq": True},
        {"type": "message"},  # an older record without a field is not damaged
        {"no": "type", "ts": 5},
    ]
    found = entries([*junk, "not a record"])  # type: ignore[list-item]
    assert [isinstance(e, Other) and e.damaged for e in found] == [True] * 5 + [False] * 2
    assert found[5] == Said("assistant", "") and isinstance(found[6], Other) and found[6].type == "event"
    person = person_text(found)
    assert "[damaged command event, seq 4]" in person and "[damaged session_ended event, seq ?]" in person
    assert model_lines(found, "commands")[0] == "[damaged command event, seq 4]"
    page = render_session_html({}, junk)
    assert page.count('class="ev ') == len(junk) and "[damaged tool_call event, seq ?]" in page


def test_history_shows_a_hand_edited_events_file(repo: Path, cli) -> None:  # type: ignore[no-untyped-def]
    from openbot import paths
    from openbot.state.history import History
    from openbot.state.project import resolve_project
    from tests.helpers import make_bot

    make_bot("fixer", [])
    h = History(paths.history_dir("fixer", resolve_project(repo).slug))
    meta = h.create_session("run-1", "m")
    lines = [
        {"type": "command", "seq": 1, "command": "make", "exit_code": 2, "duration_ms": "slow"},
        {"type": "command", "seq": 2, "command": "make", "exit_code": 0, "duration_ms": 1500},
    ]
    h.events_path(meta.session_id).write_text("".join(json.dumps(r) + "\n" for r in lines))
    r = cli("history", "fixer", "--session", "1", cwd=repo)
    assert r.exit_code == 0 and "[damaged command event, seq 1]\n$ make  [exit 0, 1.5s]" in r.stdout, r.output
    # The model's view of it: before, the tool failed on the whole session.
    from openbot.agent.tools.base import ToolContext
    from openbot.agent.tools.registry import default_tools, run_tool
    from openbot.events import ListSink

    ctx = ToolContext(workdir=repo, session_dir=repo, env={}, memory=None, history=h, sink=ListSink())
    out = run_tool(default_tools(), "session_history", {"action": "view", "session_number": 1}, ctx, "t")
    assert not out.is_error and "[damaged command event, seq 1]" in out.content, out.content


def test_the_model_sees_why_a_turn_was_aborted_once() -> None:
    record = {"type": "turn_aborted", "reason": "stuck", "detail": "same call 5 times"}
    # Bug fixed: the reason was printed twice and the detail never ("[turn_aborted] stuck stuck").
    assert model_lines([entry(record)], "all") == ["[turn_aborted] stuck same call 5 times"]
    ended = {"type": "session_ended", "status": "completed", "reason": "session_complete"}
    assert model_lines([entry(ended)], "all") == ["[session_ended] completed session_complete"]
