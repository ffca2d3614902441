"""Every shipped example bot starts: the demo runs completely, the others dry-run on their scripts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from openbot import paths
from tests.helpers import events, git, run_cli, sessions

REAL_BOTS = sorted(p.parent.name for p in paths.SHIPPED_BOTS.glob("*/dry-run.json"))


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
def test_each_shipped_bot_dry_runs(repo: Path, bot: str) -> None:
    assert run_cli("bots", "create", bot, "--from", bot, cwd=repo).returncode == 0
    script = paths.bot_home(bot) / "dry-run.json"
    out = run_cli("run", bot, "--model", f"scripted:{script}", "--max-iterations", "1", "--json", cwd=repo)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["status"] == "completed"
    [session] = sessions(bot)
    calls = [e for e in events(session) if e["type"] == "mcp_call"]
    assert all(not c["is_error"] for c in calls), calls  # a bot's own MCP server answers its dry run
    if bot == "release-notes":
        assert [c["tool"] for c in calls] == ["last_release", "commits_since"]
        assert "initial" in calls[1]["output"]


def test_there_are_real_shipped_bots() -> None:
    assert {"test-writer", "docs-fixer", "todo-triager", "release-notes"} <= set(REAL_BOTS)
