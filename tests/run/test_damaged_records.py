"""Damaged records under OPENBOT_HOME, through the real CLI. The rule (README, "Bad input"): a command that
shows records (`history`, its `--json`, `--export html`) shows a damaged one as damaged, naming the file,
and lists the rest; a command that acts on one (`run --resume`, a run's memory) stops with exit 2 naming the
file and what to do. Never a traceback, never a silent new conversation, and the damaged file is left as
it was."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from openbot import paths
from tests.helpers import complete, make_bot, reply, run_cli, sessions, shell

COMMIT = shell("echo work > work.txt && git add work.txt && git commit -qm work")


def strict(text: str) -> Any:
    """Parse as a JSON consumer does: NaN and Infinity are not JSON."""
    return json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} in the output"))


def two_sessions(repo: Path) -> list[Path]:
    make_bot("b", [reply("", complete("first run")), reply("", complete("second run"))])
    for _ in range(2):
        assert run_cli("run", "b", "--max-iterations", "1", cwd=repo).returncode == 0
    return sessions("b")


def test_history_shows_a_session_whose_metadata_holds_infinity_as_damaged(repo: Path) -> None:
    first, second = two_sessions(repo)
    meta = second / "metadata.json"
    data = meta.read_text()
    data = data.replace('"duration_secs": ', '"duration_secs": Infinity, "was": ', 1)
    data = data.replace('"cost_usd": ', '"cost_usd": NaN, "was_cost": ', 1)
    meta.write_text(data)
    listing = run_cli("history", "b", cwd=repo)
    assert listing.returncode == 0 and "Traceback" not in listing.stderr, listing.stderr
    assert "first run" in listing.stdout and "unknown" in listing.stdout
    assert f"damaged record {meta}" in listing.stdout and "is not a number openbot writes" in listing.stdout
    as_json = run_cli("history", "b", "--json", cwd=repo)
    assert as_json.returncode == 0, as_json.stderr
    rows = strict(as_json.stdout)
    assert [r["status"] for r in rows] == ["unknown", "completed"] and str(meta) in rows[0]["error"]
    one = run_cli("history", "b", "--session", "2", "--json", cwd=repo)
    assert one.returncode == 0 and strict(one.stdout)["metadata"]["status"] == "unknown", one.stderr
    page = run_cli("history", "b", "--export", "html", cwd=repo)
    assert page.returncode == 0 and "Traceback" not in page.stderr, page.stderr
    assert "damaged record" in (second / "transcript.html").read_text()
    assert meta.read_text() == data  # shown, never rewritten


def resumable_run(repo: Path) -> Path:
    """A run left for review (a commit on its branch): the directory of its record and conversation."""
    make_bot("b", [reply("", COMMIT), reply("", complete("done", "review"))] * 2)
    assert run_cli("run", "b", "--max-iterations", "1", cwd=repo).returncode == 0
    (run_dir,) = paths.bot_home("b").glob("workspaces/*/runs/*")
    return run_dir


def test_a_conversation_that_is_one_torn_line_is_refused_never_started_over(repo: Path) -> None:
    run_dir = resumable_run(repo)
    conversation = run_dir / "conversation.jsonl"
    torn = conversation.read_bytes()[:40]
    conversation.write_bytes(torn)
    proc = run_cli("run", "b", "--resume", run_dir.name, cwd=repo)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert f"{conversation}: damaged: one unfinished line" in proc.stderr and "start a new run" in proc.stderr
    assert conversation.read_bytes() == torn and len(sessions("b")) == 1


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda t: t.replace('"cost_usd": ', '"cost_usd": Infinity, "c": ', 1), id="infinity"),
        pytest.param(lambda t: t.replace('"iterations": ', '"iterations": NaN, "i": ', 1), id="nan"),
        pytest.param(lambda t: t.replace('"summary": "', '"summary": "\udcff', 1), id="not-utf8"),
    ],
)
def test_a_damaged_run_record_stops_a_resume_naming_it(repo: Path, damage: Any) -> None:
    run_dir = resumable_run(repo)
    record = run_dir / "run.json"
    data = damage(record.read_text()).encode("utf-8", "surrogateescape")
    record.write_bytes(data)
    proc = run_cli("run", "b", "--resume", run_dir.name, cwd=repo)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert f"{record}: unreadable run record" in proc.stderr, proc.stderr
    assert record.read_bytes() == data and len(sessions("b")) == 1
    assert run_cli("history", "b", cwd=repo).returncode == 0  # the listing does not read run records


def test_a_memory_file_holding_nan_stops_the_run_naming_it(repo: Path) -> None:
    make_bot("b", [reply("", complete())])
    assert run_cli("run", "b", cwd=repo).returncode == 0
    (workspace,) = paths.bot_home("b").glob("workspaces/*")
    memory = workspace / "memory.json"
    memory.write_text('{"entries": {"a": "b"}, "score": NaN}')
    for args in (["run", "b"], ["memory", "b", "show"]):
        proc = run_cli(*args, cwd=repo)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, (args, proc.stderr)
        assert f"memory file {memory} is damaged" in proc.stderr and "NaN" in proc.stderr, proc.stderr
    assert memory.read_text() == '{"entries": {"a": "b"}, "score": NaN}' and len(sessions("b")) == 1


def test_resume_with_an_empty_run_id_is_a_usage_error(repo: Path) -> None:
    make_bot("b", [reply("", complete())])
    proc = run_cli("run", "b", "--resume", "", cwd=repo)
    assert proc.returncode == 2 and "invalid run id ''" in proc.stderr and not sessions("b")


@pytest.mark.parametrize("line", ['{"seq": [1]}', '{"seq": 1e999}', '{"seq": NaN}'])
def test_a_damaged_last_event_of_the_run_log_does_not_stop_a_resume(repo: Path, line: str) -> None:
    """The run's own events.jsonl is a log: a damaged record in it is skipped by its readers, and the
    resume that appends to it counts on instead of ending in `internal error: TypeError`."""
    run_dir = resumable_run(repo)
    log = run_dir / "events.jsonl"
    log.write_text(log.read_text() + line + "\n")
    proc = run_cli("run", "b", "--resume", run_dir.name, cwd=repo)
    assert proc.returncode == 0 and "internal error" not in proc.stderr, proc.stderr
    assert len(sessions("b")) == 2 and line in log.read_text()
