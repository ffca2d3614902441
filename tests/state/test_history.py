"""History: numbered session directories are the truth; listing reads only what it shows."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from openbot import paths
from openbot.errors import NotFoundError, UsageError
from openbot.state.history import History, SessionMeta


@pytest.fixture
def history() -> History:
    return History(paths.history_dir("fixer", "app-12345678"))


def write_meta(root: Path, number: int, **fields: object) -> str:
    session_id = f"{number:06d}-20250101T000000Z"
    (root / session_id).mkdir(parents=True)
    meta = SessionMeta(session_id, number, f"run-{number}", "2025-01-01T00:00:00.000Z", **fields)  # type: ignore[arg-type]
    (root / session_id / "metadata.json").write_text(json.dumps(meta.to_dict()))
    return session_id


def test_empty_history_creates_nothing(history: History) -> None:
    assert history.recent(5) == [] and history.last_number() == 0
    with pytest.raises(NotFoundError, match="no session '1'"):
        history.get("1")
    assert not history.root.exists()


def test_create_save_get_round_trip(history: History) -> None:
    first = history.create_session(
        "run-a", "claude-x", branch="openbot/fixer-1", base="main", prompt_summary="p"
    )
    second = history.create_session("run-a", "claude-x")
    assert (first.session_number, second.session_number) == (1, 2)
    assert first.session_id.startswith("000001-") and first.session_id.endswith("Z")
    assert first.status == "running" and first.tokens == {
        "input": 0,
        "output": 0,
        "cache_read": 0,
        "cache_write": 0,
    }
    assert stat.S_IMODE(history.session_dir(first.session_id).stat().st_mode) == 0o700
    assert history.events_path(first.session_id) == history.session_dir(first.session_id) / "events.jsonl"

    first.status, first.duration_secs, first.cost_usd = "completed", 12.5, 0.25
    first.tokens["input"] = 1000
    history.save(first)
    assert stat.S_IMODE((history.session_dir(first.session_id) / "metadata.json").stat().st_mode) == 0o600
    assert history.get("1") == first == history.get(first.session_id)
    assert [m.session_number for m in history.recent(10)] == [2, 1]
    assert history.last_number() == 2
    first.status = "unknown"
    with pytest.raises(UsageError, match="session status 'unknown'"):
        history.save(first)


def test_unknown_keys_on_disk_survive_a_rewrite(history: History) -> None:
    sid = write_meta(history.root, 1)
    path = history.session_dir(sid) / "metadata.json"
    data = json.loads(path.read_text())
    data["future_field"] = {"nested": [1, 2]}
    data["tokens"]["reasoning"] = 7
    path.write_text(json.dumps(data))
    meta = history.get("1")
    assert meta.extra == {"future_field": {"nested": [1, 2]}}
    meta.status = "failed"
    history.save(meta)
    again = json.loads(path.read_text())
    assert again["future_field"] == {"nested": [1, 2]} and again["tokens"]["reasoning"] == 7
    assert again["status"] == "failed"


def test_numbering_continues_after_gaps_and_user_pruning(history: History) -> None:
    write_meta(history.root, 3)
    write_meta(history.root, 41)
    (history.root / "notes.txt").parent.mkdir(exist_ok=True)
    (history.root / "notes.txt").write_text("user file, not a session")
    (history.root / "backup-000099").mkdir()
    assert history.create_session("r", "m").session_number == 42
    assert [m.session_number for m in history.recent(10)] == [42, 41, 3]


def test_numbers_beyond_six_digits_still_sort_by_number(history: History) -> None:
    write_meta(history.root, 999_999)
    assert history.create_session("r", "m").session_id.startswith("1000000-")
    assert [m.session_number for m in history.recent(2)] == [1_000_000, 999_999]


def test_missing_or_damaged_metadata_shows_as_unknown(history: History) -> None:
    write_meta(history.root, 1)
    (history.root / "000002-20250102T030405Z").mkdir()
    bad = write_meta(history.root, 3)
    (history.session_dir(bad) / "metadata.json").write_text("{torn")
    wrong = write_meta(history.root, 4)
    (history.session_dir(wrong) / "metadata.json").write_text('{"session_id": 5}')
    metas = history.recent(10)
    assert [m.status for m in metas] == ["unknown", "unknown", "unknown", "running"]
    missing = history.get("2")
    assert missing.session_number == 2 and missing.started_at == "2025-01-02T03:04:05Z"
    assert "missing" in missing.error and "damaged" in history.get("3").error


def test_get_rejects_unknown_refs(history: History) -> None:
    write_meta(history.root, 1)
    assert history.get("000001").session_number == 1
    for ref in ("2", "0", "../000001-20250101T000000Z", "nope"):
        with pytest.raises(NotFoundError, match="no session") as info:
            history.get(ref)
        assert "the last session is 1" in info.value.hint


def test_recent_reads_only_the_metadata_it_returns(history: History) -> None:
    """With 3,000 sessions, every one but the newest 5 has damaged metadata: reading any would show it."""
    history.root.mkdir(parents=True)
    for n in range(1, 3001):
        sid = f"{n:06d}-20250101T000000Z"
        (history.root / sid).mkdir()
        (history.root / sid / "metadata.json").write_text("{damaged" if n <= 2995 else "")
    for n in range(2996, 3001):
        write_meta_over(history, n)
    metas = history.recent(5)
    assert [m.session_number for m in metas] == [3000, 2999, 2998, 2997, 2996]
    assert all(m.status == "completed" for m in metas)
    assert history.last_number() == 3000
    assert history.recent(6)[-1].status == "unknown"  # the older ones really are damaged


def write_meta_over(history: History, n: int) -> None:
    sid = f"{n:06d}-20250101T000000Z"
    meta = SessionMeta(sid, n, "r", "2025-01-01T00:00:00Z", status="completed")
    (history.session_dir(sid) / "metadata.json").write_text(json.dumps(meta.to_dict()))


CREATOR = """
import sys
from pathlib import Path
from openbot.state.history import History
h = History(Path(sys.argv[1]))
for _ in range(15):
    h.create_session("run", "m")
"""


def test_parallel_runs_never_share_a_session_number(history: History) -> None:
    procs = [subprocess.Popen([sys.executable, "-c", CREATOR, str(history.root)]) for _ in range(3)]
    assert [p.wait(timeout=60) for p in procs] == [0, 0, 0]
    numbers = sorted(m.session_number for m in history.recent(100))
    assert numbers == list(range(1, 46))


def test_from_dict_rejects_wrong_types_and_coerces_ints() -> None:
    base = {"session_id": "000001-20250101T000000Z", "session_number": 1, "run_id": "r", "started_at": "t"}
    assert SessionMeta.from_dict({**base, "duration_secs": 3}).duration_secs == 3.0
    for bad in ({**base, "session_number": "1"}, {**base, "tokens": {"input": "x"}}, {"session_id": "x"}, []):
        with pytest.raises(ValueError):
            SessionMeta.from_dict(bad)  # type: ignore[arg-type]
