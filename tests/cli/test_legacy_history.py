"""`openbot history` on damaged Rust openbot records: a one-line note each, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

from tests.legacy_fixture import OLD_THREAD, THREAD, rust_home


def test_damaged_rust_records_are_shown_as_notes(cli, repo: Path, openbot_home: Path) -> None:
    history = rust_home(openbot_home, workspace="repo")["history"]
    (history / f"{OLD_THREAD}.json").write_text('{"session_number": ')
    (history / f"{THREAD}-s2" / "metadata.json").write_bytes(b"\xff\xfe")
    (history / f"{THREAD}-s3" / "events.jsonl").write_text('{"type": "message", "content": "ok"}\n{torn\n')
    r = cli("history", "fixer", cwd=repo)
    assert r.exit_code == 0 and "Traceback" not in r.output
    rows = r.stdout.splitlines()[1:4]
    notes = r.stdout.splitlines()[4:]  # a damaged record is listed, and said in full under the table
    assert [row.split()[0] for row in rows] == ["3", "2", "0"]
    assert "unknown" in rows[1] and "damaged: see below" in rows[1] and "unknown" in rows[2]
    assert notes[0].startswith("session 2: damaged Rust openbot record") and "not valid JSON" in notes[1]
    shown = cli("history", "fixer", "--session", "3")
    assert shown.exit_code == 0 and "line 2 of" in shown.stdout and "is damaged; skipped" in shown.stdout
    assert "ok" in shown.stdout
    listed = json.loads(cli("history", "fixer", "--json").stdout)
    assert [m["status"] for m in listed] == ["legacy", "unknown", "unknown"]


def test_export_of_a_rust_session_is_refused_in_one_line(cli, repo: Path, openbot_home: Path) -> None:
    session = rust_home(openbot_home, workspace="repo")["history"] / f"{THREAD}-s3"
    before = sorted(p.name for p in session.iterdir())
    r = cli("history", "fixer", "--session", "3", "--export", "html", cwd=repo)
    assert r.exit_code == 2 and "Rust openbot record" in r.stderr and "Traceback" not in r.output
    assert sorted(p.name for p in session.iterdir()) == before  # read-only: no transcript.html
