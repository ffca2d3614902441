"""`openbot history <bot>`: the session list and one session's commands and messages."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from openbot import paths
from openbot.events import Command, EventLog, Message, Notice, TokenCount, ToolCall
from openbot.state.history import History
from openbot.state.project import resolve_project


@pytest.fixture(autouse=True)
def bot() -> None:
    bot_dir = paths.bots_dir() / "fixer"
    bot_dir.mkdir(parents=True)
    (bot_dir / "config.md").write_text("+++\n+++\nFix things.\n")


def history_of(repo: Path) -> History:
    return History(paths.history_dir("fixer", resolve_project(repo).slug))


def add_session(h: History, summary: str, status: str = "completed", tokens: int = 0) -> str:
    meta = h.create_session("run-1", "claude-x", branch="openbot/fixer-1", prompt_summary="fix things")
    meta.status, meta.response_summary, meta.duration_secs = status, summary, 75.0
    meta.tokens["input"], meta.tokens["output"] = tokens, 500
    meta.action = "merge"
    h.save(meta)
    return meta.session_id


def test_no_sessions(cli, repo: Path) -> None:
    r = cli("history", "fixer", cwd=repo)
    assert r.exit_code == 0 and r.stdout.strip() == f"no sessions for fixer in {resolve_project(repo).slug}"
    assert json.loads(cli("history", "fixer", "--json").stdout) == []


def test_list_is_newest_first_with_one_line_each(cli, repo: Path) -> None:
    h = history_of(repo)
    add_session(h, "fixed the parser", tokens=12_000)
    add_session(h, "second\nsummary on two lines", status="limit")
    add_session(h, "third", status="failed")
    r = cli("history", "fixer", cwd=repo)
    assert r.exit_code == 0
    header, *rows = r.stdout.splitlines()
    assert "tokens" in header and "status" in header
    assert [row.split()[0] for row in rows] == ["3", "2", "1"]
    assert "second summary on two lines" in rows[1] and "limit" in rows[1]
    assert "12.5k" in rows[2] and "1m15s" in rows[2] and "merge" in rows[2]
    limited = cli("history", "fixer", "-n", "2").stdout.splitlines()
    assert [row.split()[0] for row in limited[1:]] == ["3", "2"]
    as_json = json.loads(cli("history", "fixer", "--json", "--limit", "1").stdout)
    assert [m["session_number"] for m in as_json] == [3] and as_json[0]["status"] == "failed"


def test_session_view_shows_commands_exit_codes_and_messages(cli, repo: Path) -> None:
    h = history_of(repo)
    sid = add_session(h, "done")
    log = EventLog(h.events_path(sid))
    log.emit(Message(text="Running the tests first."))
    log.emit(ToolCall("t1", "shell", {"command": "pytest -q"}))
    log.emit(Command("t1", "pytest -q", 1, 2300, "F.\n1 failed", 12, full_output_path="/tmp/full.log"))
    log.emit(ToolCall("t2", "memory", {"action": "set", "key": "tests"}))
    log.emit(TokenCount("claude-x", 10, 20, 0, 0, 0.01))
    log.emit(Notice("wip_commit", "committed work in progress as abc123"))
    log.close()
    with open(h.events_path(sid), "ab") as f:  # a crash mid-write leaves a torn last line
        f.write(b'{"type": "message", "text": "never fini')

    for ref in ("1", sid):
        r = cli("history", "fixer", "--session", ref, cwd=repo)
        assert r.exit_code == 0, r.stderr
        out = r.stdout
        assert f"session 1 ({sid})" in out and "completed" in out and "openbot/fixer-1" in out
        assert "Running the tests first." in out
        assert "$ pytest -q  [exit 1, 2.3s]" in out and "1 failed" in out and "/tmp/full.log" in out
        assert "→ memory" in out and "committed work in progress" in out
        assert "never fini" not in out and "$ pytest -q" in out.split("→ memory")[0]

    doc = json.loads(cli("history", "fixer", "--session", "1", "--json").stdout)
    assert doc["metadata"]["session_id"] == sid
    assert [e["type"] for e in doc["events"]] == [
        "message",
        "tool_call",
        "command",
        "tool_call",
        "token_count",
        "notice",
    ]


def test_session_view_renders_nested_and_multi_line_metadata(cli, repo: Path) -> None:
    h = history_of(repo)
    meta = h.create_session("run-1", "claude-x", prompt_summary="first line\nsecond line")
    meta.tokens["input"] = 12_000
    meta.extra["budget"] = {
        "cost_usd": 0.1234,
        "max_cost_usd": 5.0,
        "tokens": 12_345,
        "max_tokens": None,
        "minutes": 3.21,
        "max_minutes": None,
    }
    meta.extra["sandbox"] = {"requested": "workspace-write", "enforced": "workspace-write", "warning": ""}
    meta.extra["other"] = {"k": [1, 2]}
    h.save(meta)
    out = cli("history", "fixer", "--session", "1", cwd=repo).stdout
    # Bug fixed: these were printed as Python dicts, and a second line of prompt_summary started at column 0.
    assert "  budget:           $0.12 of $5.00, 12,345 tokens, 3.2 min\n" in out
    assert "  sandbox:          workspace-write (enforced)\n" in out
    assert "  prompt_summary:   first line\n                    second line\n" in out
    assert '  other:            {"k": [1, 2]}\n' in out and "'" not in out.split("\n\n")[0]
    assert "input 12,000" in out


def test_session_view_shows_a_sandbox_that_was_not_enforced(cli, repo: Path) -> None:
    h = history_of(repo)
    meta = h.create_session("run-1", "claude-x")
    meta.extra["sandbox"] = {
        "requested": "read-only",
        "enforced": "danger-full-access",
        "warning": "no Landlock",
    }
    meta.extra["budget"] = {"cost_usd": "oops"}  # hand-edited: shown as it is, not a crash
    h.save(meta)
    r = cli("history", "fixer", "--session", "1", cwd=repo)
    assert (
        r.exit_code == 0
        and "sandbox:          danger-full-access (requested read-only: no Landlock)" in r.stdout
    )
    assert 'budget:           {"cost_usd": "oops"}' in r.stdout


def test_session_without_events_or_metadata(cli, repo: Path) -> None:
    h = history_of(repo)
    add_session(h, "ok")
    (h.root / "000002-20250102T030405Z").mkdir()
    r = cli("history", "fixer", cwd=repo)
    assert r.exit_code == 0 and "unknown" in r.stdout.splitlines()[1]
    r = cli("history", "fixer", "--session", "2")
    assert r.exit_code == 0 and "unknown" in r.stdout and "(no events recorded)" in r.stdout


def test_unknown_session_exits_2(cli, repo: Path) -> None:
    add_session(history_of(repo), "ok")
    r = cli("history", "fixer", "--session", "7", cwd=repo)
    assert r.exit_code == 2 and "no session '7'" in r.stderr and "the last session is 1" in r.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("history", "fixr"), "did you mean 'fixer'"),
        (("history", "fixer", "--project", "../x"), "invalid project"),
        (("history", "fixer", "-n", "0"), "Invalid value"),
    ],
)
def test_bad_input_exits_2(cli, repo: Path, args: tuple[str, ...], message: str) -> None:
    r = cli(*args, cwd=repo)
    assert r.exit_code == 2 and message in r.stderr


def test_project_override_reads_another_projects_history(cli, repo: Path) -> None:
    add_session(History(paths.history_dir("fixer", "nightly-ci")), "from CI")
    r = cli("history", "fixer", "--project", "nightly-ci", cwd=repo)
    assert r.exit_code == 0 and "from CI" in r.stdout


def test_history_in_a_real_subprocess(repo: Path, openbot_home: Path) -> None:
    add_session(history_of(repo), "ran in a subprocess")
    env = {**os.environ, "OPENBOT_HOME": str(openbot_home)}
    cmd = [sys.executable, "-m", "openbot", "history", "fixer"]
    r = subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "ran in a subprocess" in r.stdout
    r = subprocess.run(
        [*cmd, "--session", "9"], cwd=repo, env=env, capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 2 and r.stderr.startswith("openbot: error: no session '9'")


@pytest.mark.parametrize(
    ("script", "config", "hint"),
    [
        # Ran out inside a turn: lowering max_iterations would not help.
        ([{"tool_calls": [{"name": "shell", "input": {"command": "true"}}]}], "", "during iteration 1)"),
        # Iteration 1 ended without session_complete and iteration 2 found no reply.
        (
            [{"tool_calls": [{"name": "shell", "input": {"command": "true"}}]}, {"text": "Looked around."}],
            "max_iterations = 2",
            "start of iteration 2), or set max_iterations = 1",
        ),
    ],
)
def test_an_exhausted_script_says_where_it_ran_out(repo: Path, script: list, config: str, hint: str) -> None:
    from tests.helpers import make_bot, metadata, run_cli, sessions

    make_bot("scr", script, config=config)
    out = run_cli("run", "scr", cwd=repo)
    assert out.returncode == 1 and "add responses to the script (it ran out " in out.stderr, out.stderr
    assert hint in out.stderr and f"only {len(script)} response" in out.stderr
    last = sessions("scr")[-1]
    assert hint in metadata(last)["error"]  # what `history --session` shows later


@pytest.mark.parametrize(("count", "hidden"), [(141, 121), (22, 2), (21, 0), (3, 0)])
def test_long_command_output_shows_its_head_and_its_tail(cli, repo: Path, count: int, hidden: int) -> None:
    # Bug fixed: only the first 20 lines were shown, and errors are usually in the last ones.
    h = history_of(repo)
    sid = add_session(h, "done")
    output = "\n".join(f"line {i}" for i in range(1, count)) + "\nE   AssertionError: the real error"
    log = EventLog(h.events_path(sid))
    log.emit(Command("t1", "pytest", 1, 900, output, 12, full_output_path="/tmp/full.log"))
    log.close()
    out = cli("history", "fixer", "--session", "1", cwd=repo).stdout
    body = [line.strip() for line in out.split("$ pytest  [exit 1, 0.9s]\n", 1)[1].splitlines()]
    expected = output.splitlines()
    if hidden:
        expected = [*expected[:10], f"… {hidden} lines …", *expected[-10:]]
    assert body[: len(expected) + 1] == [*expected, "(full output: /tmp/full.log)"]
