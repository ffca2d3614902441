"""A model the Models API knows but the price table does not: its cost is unknown, shown as "?", and a
cost limit that cannot be enforced refuses to start — before anything exists — unless the user allows it."""

from __future__ import annotations

import json
from pathlib import Path

from openbot import paths
from openbot.testing.fakeapi import FakeAnthropic, reply
from tests.helpers import git, run_cli
from tests.run.test_run_runtime import KEY, complete

NEW_MODEL = "claude-nova-6"  # released after the price table was written


def nova_bot(name: str, config: str = "") -> None:
    d = paths.bot_home(name)
    d.mkdir(parents=True, exist_ok=True)
    (d / "config.md").write_text(f'+++\nmodel = "{NEW_MODEL}"\nsleep_secs = 0\n{config}\n+++\nWork.\n')


def serve(api: FakeAnthropic) -> dict[str, str]:
    api.models[NEW_MODEL] = {**api.models["claude-sonnet-5-5"]}
    return {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": api.base_url}


def test_a_cost_limit_on_an_unpriced_model_refuses_to_start(repo: Path) -> None:
    nova_bot("nova", "max_cost_usd = 5")
    branches = git(repo, "branch", "--list")
    with FakeAnthropic([]) as api:
        out = run_cli("run", "nova", cwd=repo, env=serve(api))
        assert not api.bodies  # no model call was made
    assert out.returncode == 2, out.stderr
    [line] = [ln for ln in out.stderr.splitlines() if ln.strip()][:1]
    assert "max_cost_usd = 5 cannot be enforced" in line and NEW_MODEL in line
    assert "--allow-unknown-price" in out.stderr and "Traceback" not in out.stderr
    assert git(repo, "branch", "--list") == branches  # no branch, no worktree
    assert not list(paths.bot_home("nova").glob("workspaces/*/runs/*"))


def test_allowed_the_run_goes_on_and_its_cost_shows_as_unknown(repo: Path) -> None:
    nova_bot("nova", "max_cost_usd = 5")
    with FakeAnthropic([reply("", [complete()])]) as api:
        out = run_cli("run", "nova", "--allow-unknown-price", "--json", cwd=repo, env=serve(api))
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["cost_known"] is False and result["cost_usd"] == 0
    assert result["budget"]["cost_known"] is False
    assert f"no known price for model {NEW_MODEL!r}" in out.stderr
    assert "cost ?" in out.stderr and "$0.0000" not in out.stderr
    shown = run_cli("history", "nova", "--session", "1", cwd=repo)
    [budget] = [ln for ln in shown.stdout.splitlines() if "budget" in ln]
    assert shown.returncode == 0 and "? of $5.00" in budget, shown.stdout
