"""Bad run ids and damaged state files are refused with one line (exit 2) before anything happens;
`history` shows what it can; a garbage conversation is never silently replaced by an empty one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from openbot import paths
from tests.helpers import git, make_bot, reply, run_cli, sessions, shell


def first_run(repo: Path) -> tuple[str, Path]:
    """One finished (limit) run of bot `b` that saved a WIP commit; returns its id and run dir."""
    make_bot("b", [reply("", shell("echo hi > f.txt")), reply(""), reply("")], config="max_iterations = 1")
    proc = run_cli("run", "b", "--json", cwd=repo)
    assert proc.returncode == 3, proc.stderr
    run_id = json.loads(proc.stdout)["run_id"]
    (run_dir,) = paths.bot_home("b").glob(f"workspaces/*/runs/{run_id}")
    return run_id, run_dir


def refused(proc: object, *words: str) -> None:
    out = getattr(proc, "stderr", "")
    assert getattr(proc, "returncode", None) == 2, out
    assert "Traceback" not in out and len(out.strip().splitlines()) == 1, out
    assert all(w in out for w in words), out


@pytest.mark.parametrize("bad", ["../../x", "*", "2026*", "20261122T101500Z-3fa2/../..", "x"])
def test_resume_takes_only_openbot_run_ids(repo: Path, bad: str) -> None:
    run_id, _ = first_run(repo)
    branches = git(repo, "branch", "--list")
    proc = run_cli("run", "b", "--resume", bad, cwd=repo)
    refused(proc, "invalid run id")
    assert git(repo, "branch", "--list") == branches and len(sessions("b")) == 1


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"session_ids": "abc"}, ["'session_ids'", "wrong type"]),
        ({"tokens": [1]}, ["'tokens'", "wrong type"]),
        ({"pid": "x"}, ["'pid'", "wrong type"]),
        ({"use_worktree": 1}, ["'use_worktree'", "wrong type"]),
        ({"branch": "feature"}, ["not an openbot/ branch"]),
        ({"branch": "openbot/../main"}, ["not an openbot/ branch"]),
        ({"base_commit": "HEAD~1"}, ["not a commit id"]),
        ({"status": "weird"}, ["status 'weird'"]),
        ({"project": "../../elsewhere"}, ["'project'", "lives under"]),
        ({"run_id": "20200101T000000Z-0000"}, ["not this directory's"]),
    ],
)
def test_a_crafted_or_damaged_run_record_is_refused(repo: Path, change: dict, words: list[str]) -> None:
    run_id, run_dir = first_run(repo)
    git(repo, "branch", "feature")
    record = json.loads((run_dir / "run.json").read_text())
    (run_dir / "run.json").write_text(json.dumps({**record, **change}))
    refs = git(repo, "for-each-ref")
    proc = run_cli("run", "b", "--resume", run_id, cwd=repo)
    refused(proc, str(run_dir / "run.json"), *words)
    assert git(repo, "for-each-ref") == refs  # the user's `feature` branch is neither checked out nor deleted
    assert len(sessions("b")) == 1


@pytest.mark.parametrize("garbage", [b"[1, 2]\n", b"\xff\xfe not json\n", b"{}", b""])
def test_an_unreadable_run_record_is_one_line(repo: Path, garbage: bytes) -> None:
    run_id, run_dir = first_run(repo)
    (run_dir / "run.json").write_bytes(garbage)
    refused(run_cli("run", "b", "--resume", run_id, cwd=repo), "run.json")


def test_a_torn_last_line_of_the_conversation_is_dropped_and_the_run_resumes(repo: Path) -> None:
    run_id, run_dir = first_run(repo)
    conversation = run_dir / "conversation.jsonl"
    whole = conversation.read_bytes()
    conversation.write_bytes(whole + b'{"op": "append", "mess')
    proc = run_cli("run", "b", "--resume", run_id, "-n", "1", cwd=repo)
    assert proc.returncode == 3, proc.stderr
    assert conversation.read_bytes().startswith(whole) and len(sessions("b")) == 2


def test_history_shows_what_it_can_of_damaged_sessions(repo: Path) -> None:
    first_run(repo)
    (session,) = sessions("b")
    with open(session / "events.jsonl", "ab") as f:
        f.write(b'[1, 2]\n"text"\n\xff\xfe\n')
        f.write(b'{"seq": 90, "type": "command", "command": "ls", "duration_ms": "slow", "exit_code": 0}\n')
        f.write(b'{"seq": 91, "type": "tool_call", "name": 5, "input": "x"}\n')
    proc = run_cli("history", "b", "--session", "1", cwd=repo)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert "$ echo hi > f.txt" in proc.stdout and "[damaged command event, seq 90]" in proc.stdout
    (session / "metadata.json").write_text('{"session_id": 5, "tokens": "x"}')
    listing = run_cli("history", "b", cwd=repo)
    assert listing.returncode == 0 and "unknown" in listing.stdout and "wrong type" in listing.stdout
    one = run_cli("history", "b", "--session", "1", cwd=repo)
    assert one.returncode == 0 and "$ echo hi > f.txt" in one.stdout, one.stderr
