"""Models with a key set and no network (issue 35, item 5): a model API whose host name does not resolve.

`.invalid` never resolves (RFC 6761), with or without a network, so these runs are offline by design. The
name that cannot be checked is refused or said at start; the run's calls give the host up after
`DNS_ATTEMPTS` attempts (not `api_patience_minutes`, 30 by default) and say which setting to check.
"""

from __future__ import annotations

from pathlib import Path

from openbot import paths
from openbot.agent.models.outage import DNS_ATTEMPTS
from tests.helpers import events, git, run_cli, sessions

KEY = "sk-ant-api03-TESTKEY-offline-0123456789abcdef"
NOWHERE = "http://openbot-no-such-host.invalid/"


def bot(name: str, config: str) -> None:
    d = paths.bot_home(name)
    d.mkdir(parents=True, exist_ok=True)
    (d / "config.md").write_text(f"+++\n{config}\nsleep_secs = 0\nmax_iterations = 1\n+++\nWork.\n")


def test_an_unknown_claude_name_is_refused_when_the_api_host_does_not_resolve(repo: Path) -> None:
    bot("offline", 'model = "claude-nonexistent-model-x"')
    env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": NOWHERE}
    out = run_cli("run", "offline", cwd=repo, env=env)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in out.stderr
    assert "could not check model 'claude-nonexistent-model-x'" in lines[0]
    assert "host openbot-no-such-host.invalid does not resolve" in lines[0]
    assert "check ANTHROPIC_BASE_URL" in lines[0] and KEY not in out.stderr
    assert sessions("offline") == [] and git(repo, "branch", "--list", "openbot/*") == ""


def test_a_known_claude_name_says_so_at_start_and_the_run_gives_the_host_up(repo: Path) -> None:
    bot("known", 'model = "claude-sonnet-4-5"')  # the default api_patience_minutes (30) stays in force
    env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": NOWHERE}
    out = run_cli("run", "known", cwd=repo, env=env)
    assert out.returncode == 1, out.stderr
    start = out.stderr.split("── session")[0]
    assert "could not check model 'claude-sonnet-4-5': host openbot-no-such-host.invalid" in start
    assert "stayed unreachable" in out.stderr and f"over {DNS_ATTEMPTS} attempts" in out.stderr
    assert "check ANTHROPIC_BASE_URL" in out.stderr and KEY not in out.stderr
    (session,) = sessions("known")
    retries = [e for e in events(session) if e["type"] == "retry"]
    assert len(retries) == DNS_ATTEMPTS - 1
    assert all("does not resolve" in e["cause"] for e in retries)


def test_a_compatible_server_that_does_not_resolve_is_said_at_start_and_given_up(repo: Path) -> None:
    bot("compat", f'model = "openai-compatible:qwen3-coder"\nbase_url = "{NOWHERE}v1"')
    out = run_cli("run", "compat", cwd=repo)
    assert out.returncode == 1, out.stderr
    start = out.stderr.split("── session")[0]
    assert "could not check model 'qwen3-coder': host openbot-no-such-host.invalid does not resolve" in start
    assert f"over {DNS_ATTEMPTS} attempts" in out.stderr and "check base_url" in out.stderr
    (session,) = sessions("compat")
    assert len([e for e in events(session) if e["type"] == "retry"]) == DNS_ATTEMPTS - 1
