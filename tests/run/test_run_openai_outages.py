"""Outages and budgets on the OpenAI-SDK backend through the real CLI: the same waits, events and exit
codes as the Anthropic path (tests/run/test_run_runtime.py), in both wire protocols."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from openbot.testing.fakeopenai import (
    FakeOpenAI,
    Reply,
    cut,
    overloaded,
    rate_limited,
    reply,
    stall,
)
from tests.helpers import events, sessions
from tests.run.test_run_openai import bot, complete, run, shell

MODELS = {"responses": "openai:gpt-5.1", "chat": "openai-compatible:coder"}


@pytest.mark.parametrize("protocol", ["responses", "chat"])
def test_429s_529s_a_cut_and_a_stall_are_waited_out_and_the_run_completes(repo: Path, protocol: str) -> None:
    # Backoff without retry-after doubles from 1 s, so the two such failures come first (the mid-stream
    # error frame is tested at the backend: tests/agent/models/test_openai_backend.py).
    episode = [cut(), stall(secs=4), rate_limited("0.02"), overloaded(20), rate_limited("0.02")]
    with FakeOpenAI([*episode, reply("", [complete()])], models={"gpt-5.1": {}, "coder": {}}) as api:
        # the stall is mid-stream: no extra time for a chat server's first token (test_small_models.py)
        bot("patient", MODELS[protocol], "stall_timeout_secs = 1\nfirst_token_timeout_secs = 1")
        code, result, stderr = run(api, repo, "patient")
        api.assert_done()
    assert code == 0 and result["status"] == "completed", stderr
    [session] = sessions("patient")
    retries = [e for e in events(session) if e["type"] == "retry"]
    assert len(retries) == len(episode)
    assert [r["wait_secs"] for r in retries[2:]] == [0.02, 0.02, 0.02]  # retry-after and retry-after-ms
    assert "rate limited" in retries[2]["cause"] and "overloaded" in retries[3]["cause"]
    assert "connection" in retries[0]["cause"] and "stalled" in retries[1]["cause"]
    assert not [e for e in events(session) if e["type"] == "command"]  # no partial reply's call ran


@pytest.mark.parametrize("protocol", ["responses", "chat"])
def test_a_token_budget_counts_what_was_processed_not_cache_reads(repo: Path, protocol: str) -> None:
    script: list[Reply] = [reply("", [shell(f"echo {n}", f"call_{n}")]) for n in range(5)]
    with FakeOpenAI([*script, reply("", [complete()])], models={"gpt-5.1": {}, "coder": {}}) as api:
        bot("budget", MODELS[protocol], "max_tokens = 5000\nmax_repeats = 50")
        code, result, stderr = run(api, repo, "budget")
    # Bug fixed: the budget counted the cached prefix again on every call, and stopped this run at 5,000
    tokens = result["tokens"]
    assert code == 0 and sum(tokens.values()) > 5000 and tokens["cache_read"] > 0, stderr
    assert result["budget"]["tokens"] == tokens["input"] + tokens["output"] + tokens["cache_write"] < 5000
    with FakeOpenAI(script, models={"gpt-5.1": {}, "coder": {}}) as api:
        bot("budget", MODELS[protocol], "max_tokens = 1500\nmax_repeats = 50")
        code, result, stderr = run(api, repo, "budget")
        left = len(api.items) - len(api.bodies)
    assert code == 3 and result["status"] == "limit" and "token limit" in result["reason"], stderr
    assert left > 0 and result["budget"]["tokens"] >= 1500  # stopped at the first check past the limit


def test_a_cost_budget_stops_an_openai_run_and_a_local_one_is_priced_by_its_config(repo: Path) -> None:
    pricey = reply("", [shell("echo hi", "call_1")])
    pricey.usage = {"input": 200_000, "output": 1_000}  # $0.26 at gpt-5.1's $1.25 / $10 per Mtok
    with FakeOpenAI([pricey], models={"gpt-5.1": {}}) as api:
        bot("spender", "openai:gpt-5.1", "max_cost_usd = 0.10")
        code, result, stderr = run(api, repo, "spender")
    assert code == 3 and result["status"] == "limit" and "cost limit" in result["reason"], stderr
    assert result["cost_usd"] == pytest.approx(0.26, abs=0.01)
    local = reply("", [complete()])
    local.usage = {"input": 1_000_000, "output": 0}
    with FakeOpenAI([local], models={"coder": {}}) as api:
        bot("priced", "openai-compatible:coder", "price_in_per_mtok = 0.5\nprice_out_per_mtok = 1.0")
        code, result, stderr = run(api, repo, "priced")
    assert code == 0 and result["cost_usd"] == pytest.approx(0.5, abs=0.01), stderr


def test_a_stall_longer_than_max_minutes_stops_at_the_budget_with_exit_3(repo: Path) -> None:
    with FakeOpenAI([stall(secs=60)], models={"coder": {}}) as api:
        bot("stalled", "openai-compatible:coder", "max_minutes = 0.05")  # 3 s
        started = time.monotonic()
        code, result, stderr = run(api, repo, "stalled")
        elapsed = time.monotonic() - started
    assert code == 3 and result["status"] == "limit" and "max_minutes" in result["reason"], stderr
    assert elapsed < 30  # stopped at the budget (3 s + start-up), not after the 60 s stall


def test_negative_completion_tokens_buy_no_room_under_a_cost_cap(repo: Path) -> None:
    """A server (or a proxy) reporting `completion_tokens: -1000000` priced the call at $-9.99: the run's
    $1 cap had ~$10 more room. Such usage is a server error now (agent/budget.py)."""
    negative = reply("", [shell("echo hi", "call_1")])
    negative.usage = {"input": 1_000, "output": -1_000_000}
    with FakeOpenAI([negative, reply("", [complete()])], models={"coder": {}}) as api:
        bot(
            "priced",
            "openai-compatible:coder",
            "price_in_per_mtok = 0.5\nprice_out_per_mtok = 10\nmax_cost_usd = 1",
        )
        code, result, stderr = run(api, repo, "priced")
        served = len(api.bodies)
    assert code == 1 and "usage no call can have (output tokens -1,000,000)" in result["reason"], stderr
    assert served == 1 and result["cost_usd"] == 0
