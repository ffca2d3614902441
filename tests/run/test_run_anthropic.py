"""`openbot run` end to end on the Anthropic backend: the real SDK against the loopback Messages server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from openbot import paths
from openbot.testing.fakeapi import FakeAnthropic, error_event, http_error, reply
from tests.helpers import events, git, metadata, run_cli, sessions

KEY = "sk-ant-api03-TESTKEY-do-not-leak-0123456789abcdef"


def claude_bot(name: str, config: str = "") -> None:
    d = paths.bot_home(name)
    d.mkdir(parents=True, exist_ok=True)
    (d / "config.md").write_text(f'+++\nmodel = "claude-sonnet-5-5"\nsleep_secs = 0\n{config}\n+++\nWork.\n')


def test_run_on_the_anthropic_backend_records_usage_and_keeps_the_key_secret(repo: Path) -> None:
    claude_bot("claude")
    script = [
        reply(
            "Checking the environment.",
            tool_calls=[{"name": "shell", "input": {"command": "env; echo $ANTHROPIC_API_KEY"}}],
        ),
        error_event("overloaded_error"),  # the stream breaks mid-way: re-sent, the tool runs once
        reply(
            "",
            tool_calls=[
                {
                    "name": "shell",
                    "input": {"command": "echo made > made.txt && git add -A && git commit -qm made"},
                }
            ],
        ),
        reply(
            "",
            tool_calls=[
                {"name": "session_complete", "input": {"summary": "made a file", "action": "review"}}
            ],
        ),
    ]
    with FakeAnthropic(script) as api:
        env = {
            "ANTHROPIC_API_KEY": KEY,
            "ANTHROPIC_BASE_URL": api.base_url,
            "GITHUB_TOKEN": "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        }
        out = run_cli("run", "claude", "--json", cwd=repo, env=env)
        assert out.returncode == 0, out.stderr
        api.assert_done()
        bodies = api.bodies
    result = json.loads(out.stdout)
    assert git(repo, "show", f"{result['branch']}:made.txt") == "made"
    [session] = sessions("claude")
    log = (session / "events.jsonl").read_text()
    assert KEY not in log and "ghp_abcdefghij" not in log
    assert KEY not in out.stderr and KEY not in out.stdout
    conversation = next(paths.bot_home("claude").glob("workspaces/*/runs/*/conversation.jsonl")).read_text()
    assert KEY not in conversation
    env_output = next(e for e in events(session) if e["type"] == "command")["output"]
    assert (
        "ANTHROPIC_API_KEY" not in env_output and "GITHUB_TOKEN" not in env_output and "PATH=" in env_output
    )
    sent = json.dumps(bodies)
    assert KEY not in sent  # tool results sent back to the model carry no key either
    assert [e["type"] for e in events(session)].count("command") == 2  # the broken stream ran nothing twice
    assert any(e["type"] == "retry" for e in events(session))
    meta = metadata(session)
    assert (
        sum(meta["tokens"].values()) > 0
        and meta["tokens"]["cache_write"] > 0
        and meta["cost_usd"] > 0
        and result["cost_usd"] == pytest.approx(meta["cost_usd"])
    )


def test_auth_error_fails_the_run_with_exit_1_and_a_key_hint(repo: Path) -> None:
    claude_bot("claude")
    with FakeAnthropic([http_error(401)]) as api:
        out = run_cli(
            "run",
            "claude",
            "--json",
            cwd=repo,
            env={"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": api.base_url},
        )
    assert out.returncode == 1
    result = json.loads(out.stdout)
    assert result["status"] == "failed" and "ANTHROPIC_API_KEY" in result["reason"]
    assert metadata(sessions("claude")[0])["status"] == "failed"
    assert not list((repo / ".git/openbot-worktrees").glob("claude-*"))  # removed on this exit path too
    # nothing was committed: the empty branch is dropped, and a resume (with a good key) recreates it
    assert git(repo, "branch", "--list", "openbot/*") == "" and result["resume_command"]


def test_cost_budget_stops_the_run_with_exit_3(repo: Path) -> None:
    claude_bot("claude", "max_cost_usd = 0.01")
    usage = {"input_tokens": 5000, "output_tokens": 500}
    script = [
        reply("", tool_calls=[{"name": "shell", "input": {"command": f"echo {i}"}}], usage=usage)
        for i in range(5)
    ]
    with FakeAnthropic(script) as api:
        out = run_cli(
            "run",
            "claude",
            "--json",
            cwd=repo,
            env={"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": api.base_url},
        )
        calls = len(api.requests)
    result = json.loads(out.stdout)
    assert out.returncode == 3 and result["status"] == "limit" and "cost limit" in result["reason"]
    assert calls < 5 and result["budget"]["max_cost_usd"] == 0.01 and result["cost_usd"] >= 0.01
    assert metadata(sessions("claude")[0])["status"] == "limit"


def test_an_auth_token_alone_is_enough_as_it_is_for_the_sdk(repo: Path) -> None:
    # Bug fixed: the run refused with "ANTHROPIC_API_KEY is not set" although the SDK (and the backend)
    # accept ANTHROPIC_AUTH_TOKEN instead.
    claude_bot("token")
    done = {"name": "session_complete", "input": {"summary": "nothing to do", "action": "review"}}
    with FakeAnthropic([reply("", tool_calls=[done])]) as api:
        env = {"ANTHROPIC_AUTH_TOKEN": KEY, "ANTHROPIC_BASE_URL": api.base_url}
        out = run_cli("run", "token", "--json", cwd=repo, env=env)
        assert out.returncode == 0, out.stderr
        api.assert_done()
    assert json.loads(out.stdout)["status"] == "completed" and KEY not in out.stderr


def test_a_mistyped_model_is_refused_when_the_models_api_cannot_be_reached(
    repo: Path, closed_port: int
) -> None:
    closed = f"http://127.0.0.1:{closed_port}"  # nothing listens there: the Models API cannot be reached
    claude_bot("typo")
    env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": closed}
    out = run_cli("run", "typo", "-m", "claude-sonet-5-5", cwd=repo, env=env)
    assert out.returncode == 2 and "could not check model 'claude-sonet-5-5' (no answer" in out.stderr
    assert "did you mean 'claude-sonnet-5-5'" in out.stderr and "Traceback" not in out.stderr
    assert sessions("typo") == [] and git(repo, "branch", "--list", "openbot/*") == ""
    # a name unlike any openbot knows (newer than it) is not refused for being unknown, but said at start
    newer = run_cli("run", "typo", "-m", "claude-nextgen-9", "--api-patience-minutes", "0", cwd=repo, env=env)
    assert newer.returncode != 2 and "Traceback" not in newer.stderr
    start = newer.stderr.split("── session")[0]
    assert "could not check model 'claude-nextgen-9' (the Models API did not answer" in start
