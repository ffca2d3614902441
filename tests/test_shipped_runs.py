"""Every shipped example bot starts: the demo runs completely, the others dry-run on their scripts against
a small real Python project — the ones that run the project's code with their setup step, as in CI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from openbot import paths
from tests.helpers import events, git, run_cli, sessions
from tests.projects import python_project

REAL_BOTS = sorted(p.parent.name for p in paths.SHIPPED_BOTS.glob("*/dry-run.json"))
# The bots whose work runs the project's code (its tests, its --help, its examples) set it up first.
SET_UP = {"test-writer", "docs-fixer", "todo-triager"}


def test_the_offline_demo_runs_end_to_end(repo: Path) -> None:
    assert run_cli("bots", "create", "demo", "--from", "demo", cwd=repo).returncode == 0
    out = run_cli("run", "demo", "--json", cwd=repo)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["action"] == "review"
    assert git(repo, "show", f"{result['branch']}:HELLO_FROM_OPENBOT.md").startswith("# Hello from openbot")
    assert "demo-greeting" in run_cli("memory", "demo", "show", cwd=repo).stdout
    assert "completed" in run_cli("history", "demo", cwd=repo).stdout


@pytest.mark.parametrize("bot", REAL_BOTS)
def test_each_shipped_bot_dry_runs(tmp_path: Path, bot: str) -> None:
    repo = python_project(tmp_path / "repo")
    assert run_cli("bots", "create", bot, "--from", bot, cwd=repo).returncode == 0
    script = paths.bot_home(bot) / "dry-run.json"
    args = ("run", bot, "--model", f"scripted:{script}", "--max-iterations", "1", "--json")
    out = run_cli(*args, cwd=repo, timeout=300)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["status"] == "completed"
    [session] = sessions(bot)
    ran = [e for e in events(session) if e["type"] == "command"]
    setup = [c for c in ran if str(c["tool_use_id"]).startswith("setup-")]
    assert all(c["exit_code"] == 0 for c in setup), setup
    notices = [e["message"] for e in events(session) if e["type"] == "notice" and e["kind"] == "setup_done"]
    if bot in SET_UP:  # the project installed in the checkout's own .venv, which the agent's commands use
        assert setup and notices and notices[0].endswith("/.venv"), notices
    else:
        assert not setup
    if bot == "test-writer":
        assert "/.venv/bin/python (VIRTUAL_ENV=" in str(ran[len(setup)]["output"]), ran[len(setup)]["output"]
    assert not git(repo, "status", "--porcelain")  # the user's checkout is as it was
    calls = [e for e in events(session) if e["type"] == "mcp_call"]
    assert all(not c["is_error"] for c in calls), calls  # a bot's own MCP server answers its dry run
    if bot == "release-notes":
        assert [c["tool"] for c in calls] == ["last_release", "commits_since"]
        assert "initial" in calls[1]["output"]


def test_there_are_real_shipped_bots() -> None:
    assert {"test-writer", "docs-fixer", "todo-triager", "release-notes"} <= set(REAL_BOTS)
