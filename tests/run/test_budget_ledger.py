"""The budget ledger ($OPENBOT_HOME/budget.toml) through the real CLI, with priced calls on the loopback
Messages API: parallel runs share the caps, the refused ones end `over_budget` (exit 6) with their work."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from openbot import paths
from openbot.state.ledger import Ledger
from openbot.testing.fakeapi import FakeAnthropic, reply
from tests.helpers import git, make_repo, run_cli

KEY = "sk-ant-api03-TESTKEY-ledger-0123456789abcdef"
CALLS = 8
# Each call bills 5,000 input + 500 output tokens of claude-sonnet-5-5 ($2 / $10 per M): $0.015.
USAGE: dict[str, Any] = {
    "input_tokens": 5000,
    "output_tokens": 500,
    "cache_creation_input_tokens": 0,
    "cache_read_input_tokens": 0,
    "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
}


def spender() -> None:
    d = paths.bot_home("spender")
    d.mkdir(parents=True, exist_ok=True)
    (d / "config.md").write_text(
        '+++\nmodel = "claude-sonnet-5-5"\nsleep_secs = 0\nmax_iterations = 1\nmax_output_tokens = 2000\n'
        "max_turn_steps = 50\n+++\nWork.\n"
    )


def script() -> list[Any]:
    commit = "echo {n} >> work.txt && git add -A && git commit -qm step{n}"
    steps = [
        reply("", [{"name": "shell", "input": {"command": commit.format(n=n)}, "id": f"t{n}"}], usage=USAGE)
        for n in range(CALLS)
    ]
    done = {"name": "session_complete", "input": {"summary": "done", "action": "review"}}
    return [*steps, reply("", [done], usage=USAGE)]


def budget_toml(text: str) -> None:
    paths.home().mkdir(parents=True, exist_ok=True)
    (paths.home() / "budget.toml").write_text(text)


def start(repo: Path, api: FakeAnthropic) -> subprocess.Popen[str]:
    env = {**os.environ, "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": api.base_url}
    return subprocess.Popen(
        [sys.executable, "-m", "openbot", "run", "spender", "--json"],
        cwd=repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )


def test_parallel_runs_never_pass_the_shared_cap_and_the_refused_keep_their_work(tmp_path: Path) -> None:
    spender()
    cap = 0.45  # four runs want 4 x 9 x $0.015 = $0.54
    budget_toml(f"[overall]\ndaily_usd = {cap}\n")
    repos = [make_repo(tmp_path / f"repo{i}") for i in range(4)]
    with ExitStack() as stack:
        apis = [stack.enter_context(FakeAnthropic(script())) for _ in repos]
        procs = [start(r, a) for r, a in zip(repos, apis, strict=True)]
        outs = [p.communicate(timeout=300) for p in procs]
        served = [len(a.bodies) for a in apis]
    codes = [p.returncode for p in procs]
    assert set(codes) <= {0, 6}, [err for _, err in outs]
    assert 6 in codes  # the cap cannot hold all four
    entries = Ledger(paths.home()).entries()
    spent = sum(e.spent for e in entries.values())
    assert spent <= cap
    assert not any(e.open for e in entries.values())  # every run released its reservation
    results = [json.loads(out) for out, _ in outs]
    assert sum(r["cost_usd"] for r in results) == pytest.approx(spent)  # every billed call is in the ledger
    for repo, result, code, calls in zip(repos, results, codes, served, strict=True):
        assert result["cost_usd"] == round(calls * 0.015, 6)
        if code == 6:
            assert result["status"] == "over_budget" and "daily cap (overall" in result["reason"]
            if not calls:  # refused before its first call: an empty branch is dropped, resumably
                continue
            # nothing lost: every call the API answered ran its commit, and the branch keeps them all
            log = git(repo, "log", "--format=%s", result["branch"]).splitlines()
            assert sum(s.startswith("step") for s in log) == calls
            record = json.loads(
                next(
                    paths.bot_home("spender").glob(f"workspaces/*/runs/{result['run_id']}/run.json")
                ).read_text()
            )
            assert record["status"] == "over_budget" and record["exit_code"] == 6


def test_a_dead_process_reservation_counts_and_a_torn_line_is_ignored(repo: Path) -> None:
    spender()
    budget_toml("[bots.spender]\nweekly_usd = 0.30\n")
    dead = {"op": "reserve", "id": "999999-x", "t": __import__("time").time(), "bot": "spender"}
    line = json.dumps({**dead, "repo": "elsewhere", "usd": 0.25, "pid": 999999})
    (paths.home() / "ledger.jsonl").write_text(line + '\n{"op": "spend", "id": "999999-x", "us')
    with FakeAnthropic(script()) as api:
        env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": api.base_url}
        out = run_cli("run", "spender", "--json", cwd=repo, env=env)
        assert api.bodies == []  # refused before the first call: $0.25 held + $0.18 reserved > $0.30
    assert out.returncode == 6, out.stderr
    result = json.loads(out.stdout)
    assert result["status"] == "over_budget" and "weekly cap (bot spender" in result["reason"]
    assert result["summary"].startswith(
        "stopped by the budget ledger: the weekly cap"
    )  # not "…: budget ledger: …"
    text = (paths.home() / "ledger.jsonl").read_text()
    assert text.count("\n") == 1 and text.endswith("\n")  # the torn tail was cut, nothing was appended


def test_a_bad_budget_toml_is_exit_2_naming_file_and_key(repo: Path) -> None:
    spender()
    budget_toml("[bots.spender]\ndaily = 5\n")
    out = run_cli("run", "spender", cwd=repo, env={"ANTHROPIC_API_KEY": KEY})
    assert out.returncode == 2
    assert "budget.toml" in out.stderr and "bots.spender.daily" in out.stderr
    assert "Traceback" not in out.stderr
    assert not list(paths.bot_home("spender").glob("workspaces/*/runs/*"))
    doctor = run_cli("doctor", cwd=repo)
    assert doctor.returncode == 1 and "FAIL" in doctor.stdout and "bots.spender.daily" in doctor.stdout


def test_a_run_stopped_by_the_ledger_mid_way_keeps_its_commits_and_resumes(repo: Path) -> None:
    spender()
    # first call: $0.18 reserved; then n x $0.015 spent + $0.122 reserved must stay within $0.20: 6 calls
    budget_toml("[repos]\n[repos.elsewhere]\ndaily_usd = 0.01\n[bots.spender]\ndaily_usd = 0.20\n")
    with FakeAnthropic(script()) as api:
        env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": api.base_url}
        out = run_cli("run", "spender", "--json", cwd=repo, env=env)
        assert len(api.bodies) == 6
        result = json.loads(out.stdout)
        assert out.returncode == 6 and result["status"] == "over_budget", out.stderr
        log = git(repo, "log", "--format=%s", result["branch"]).splitlines()
        assert [s for s in log if s.startswith("step")] == [f"step{n}" for n in reversed(range(6))]
        # the morning report says so, with the ledger's figures and the command that goes on
        report = json.loads(run_cli("digest", "--json", cwd=repo).stdout)
        [row] = report["runs"]
        assert row["status"] == "over_budget" and row["diffstat"]["files"] == 1
        assert row["commands"]["continue"] == f"cd {repo} && openbot run spender --resume {result['run_id']}"
        assert report["budget"] == [
            {
                "cap": "daily cap (repo elsewhere, $0.01)",
                "usd": 0.01,
                "used_usd": 0.0,
                "matches": "matches no repository openbot has run in",  # no run was ever in `elsewhere`
            },
            {"cap": "daily cap (bot spender, $0.2)", "usd": 0.2, "used_usd": pytest.approx(0.09)},
        ]
        doctor = run_cli("doctor", cwd=repo)
        assert "budget.toml" in doctor.stdout and "daily cap (bot spender, $0.2): $0.09 used" in doctor.stdout
        budget_toml("[bots.spender]\ndaily_usd = 1.0\n")  # the team raises the cap: the run goes on
        again = run_cli("run", "spender", "--resume", result["run_id"], "--json", cwd=repo, env=env)
        assert again.returncode == 0, again.stderr
        api.assert_done()
    assert json.loads(again.stdout)["cost_usd"] == pytest.approx(9 * 0.015)


def test_a_ledger_that_cannot_be_used_fails_closed(repo: Path) -> None:
    spender()
    budget_toml("[overall]\ndaily_usd = 5\n")
    (paths.home() / "ledger.jsonl").mkdir()  # unreadable as a file: no call is made unrecorded
    with FakeAnthropic(script()) as api:
        out = run_cli(
            "run",
            "spender",
            "--json",
            cwd=repo,
            env={"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": api.base_url},
        )
        assert api.bodies == []
    result = json.loads(out.stdout)
    assert out.returncode == 6 and "could not be used" in result["reason"], out.stderr


@pytest.mark.parametrize(
    "bad",
    [
        {"output_tokens": -1_000_000},  # a cost of $-9.99: ~$10 more room under the cap
        {"input_tokens": float("nan")},  # a NaN cost: no cap would ever refuse again
        {"output_tokens": 10**15},  # absurd: over ABSURD_TOKENS in one call
    ],
    ids=["negative", "nan", "absurd"],
)
def test_usage_no_call_can_have_is_a_server_error_and_the_reservation_stays_spent(
    repo: Path, bad: dict[str, Any]
) -> None:
    spender()
    cap = 1.0
    budget_toml(f"[overall]\ndaily_usd = {cap}\n")
    steps = script()
    steps[0] = reply(
        "", [{"name": "shell", "input": {"command": "true"}, "id": "t0"}], usage={**USAGE, **bad}
    )
    with FakeAnthropic(steps) as api:
        env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": api.base_url}
        out = run_cli("run", "spender", "--json", cwd=repo, env=env)
        assert len(api.bodies) == 1  # nothing more was asked of a server that reports such usage
    result = json.loads(out.stdout)
    assert out.returncode == 1 and "usage no call can have" in result["reason"], out.stderr
    assert result["cost_usd"] == 0 and "Traceback" not in out.stderr
    entries = Ledger(paths.home()).entries()
    [held] = entries.values()
    # $0.18 reserved (40,000 prompt tokens at twice $2/M, 2,000 output at $10/M): counted as spent
    assert not held.open and held.spent == pytest.approx(0.18) == held.reserved
    records = [json.loads(line) for line in (paths.home() / "ledger.jsonl").read_text().splitlines()]
    assert all(0 <= r["usd"] < cap for r in records if "usd" in r), records  # NaN compares False
