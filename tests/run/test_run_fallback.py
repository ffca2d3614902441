"""`fallback_models` end to end (issue 25, item 7): a run outlives a dead or refusing model on the next one,
with a `model_switched` notice, each reply priced by its own model, a circuit breaker that keeps the dead
model from being asked on every call, and a resume that works across protocols. Patience is 0 (the first
failure gives a model up), so nothing here waits on a clock."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from openbot import paths
from openbot.testing import fakeapi, fakeopenai
from openbot.testing.fakeapi import FakeAnthropic
from openbot.testing.fakeopenai import FakeOpenAI
from tests.helpers import events, git, run_cli, sessions

KEY = "sk-ant-api03-TESTKEY-do-not-leak-0123456789abcdef"
OPENAI_KEY = "sk-proj-TESTKEY-0123456789abcdef"
DEAD = "claude-sonnet-5-5"


def bot(config: str) -> None:
    d = paths.bot_home("fb")
    d.mkdir(parents=True, exist_ok=True)
    (d / "config.md").write_text(f'+++\nmodel = "{DEAD}"\nsleep_secs = 0\n{config}\n+++\nWork.\n')


def run(env: dict[str, str], *args: str) -> tuple[int, dict[str, Any], str]:
    out = run_cli("run", "fb", "--json", *args, cwd=Path.cwd(), env=env)
    return out.returncode, json.loads(out.stdout or "{}"), out.stderr


def shell(command: str, id: str) -> dict[str, Any]:
    return {"name": "shell", "input": {"command": command}, "id": id}


def complete(id: str = "call_end") -> dict[str, Any]:
    return {"name": "session_complete", "input": {"summary": "done", "action": "review"}, "id": id}


def all_events() -> list[dict[str, Any]]:
    return [e for s in sessions("fb") for e in events(s)]


def switches() -> list[dict[str, Any]]:
    return [e for e in all_events() if e["type"] == "notice" and e["kind"] == "model_switched"]


def dead_primary(body: dict[str, Any]) -> fakeapi.HttpError | None:
    return fakeapi.overloaded() if body.get("model") == DEAD else None


def test_a_run_outlives_a_dead_model_on_its_fallback_and_completes(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo)
    script = [
        fakeapi.reply("", [shell("echo one > one.txt", "toolu_1")]),
        fakeapi.reply("", [shell("git add -A && git commit -qm one", "toolu_2")]),
        fakeapi.reply("", [complete()]),
    ]
    with FakeAnthropic(script, respond=dead_primary) as api:
        bot('fallback_models = ["claude-haiku-4-5"]\napi_patience_minutes = 0')
        code, result, stderr = run({"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": api.base_url})
        models = [b["model"] for b in api.bodies]
        api.assert_done()
    assert code == 0 and result["status"] == "completed", stderr
    assert git(repo, "show", f"{result['branch']}:one.txt") == "one"
    assert models == [DEAD, "claude-haiku-4-5", "claude-haiku-4-5", "claude-haiku-4-5"]  # the breaker
    [switch] = switches()
    assert switch["data"]["from"] == DEAD and switch["data"]["to"] == "claude-haiku-4-5"
    assert "unavailable" in switch["data"]["reason"]
    counts = [e for e in all_events() if e["type"] == "token_count"]
    assert {e["model"] for e in counts} == {"claude-haiku-4-5"}  # priced as the model that answered
    assert all(e["cost_known"] and e["cost_usd"] > 0 for e in counts)
    assert result["cost_usd"] == pytest.approx(sum(e["cost_usd"] for e in counts), abs=1e-5)


def test_a_refusal_goes_on_on_the_next_model(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(repo)
    script = [fakeapi.refusal("I can"), fakeapi.reply("", [complete()])]
    with FakeAnthropic(script) as api:
        bot('fallback_models = ["claude-opus-5-5"]')
        code, result, stderr = run({"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": api.base_url})
        models = [b["model"] for b in api.bodies]
        api.assert_done()
    assert code == 0 and result["status"] == "completed", stderr
    assert models == [DEAD, "claude-opus-5-5"]
    [switch] = switches()
    assert "refused" in switch["data"]["reason"]


def test_resume_works_across_a_switch_to_another_protocol(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude down → an OpenAI reasoning model (its reasoning items kept); the run resumed with Claude up:
    the OpenAI reasoning is left out of what Claude is sent, the rest of the conversation goes as it is."""
    monkeypatch.chdir(repo)
    first = [
        fakeopenai.reply(
            "", [shell("echo one > one.txt && git add -A && git commit -qm one", "c1")], reasoning="Plan."
        ),
        fakeopenai.reply("Iteration done.", reasoning="Stop."),
    ]
    with (
        FakeAnthropic([fakeapi.reply("", [complete()])]) as claude,
        FakeOpenAI(first, models={"gpt-5.1": {}}) as oa,
    ):
        env = {
            "ANTHROPIC_API_KEY": KEY,
            "ANTHROPIC_BASE_URL": claude.base_url,
            "OPENAI_API_KEY": OPENAI_KEY,
            "OPENAI_BASE_URL": oa.base_url,
        }
        claude.respond = dead_primary
        bot('fallback_models = ["openai:gpt-5.1"]\napi_patience_minutes = 0\nmax_iterations = 1')
        code, one, stderr = run(env)
        assert code == 3 and one["status"] == "limit", stderr
        claude.respond = None  # Claude is back
        code, two, stderr = run(env, "--resume", one["run_id"])
        sent = claude.bodies[-1]
        claude.assert_done()
        oa.assert_done()
    assert code == 0 and two["status"] == "completed", stderr
    assert git(repo, "show", f"{two['branch']}:one.txt") == "one"
    assert sent["model"] == DEAD
    assert "openai_reasoning" not in json.dumps(sent["messages"])
    assert "echo one" in json.dumps(sent["messages"])  # the fallback's work is in the conversation


def test_a_fallback_to_another_claude_model_gets_past_the_first_models_thinking(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sonnet thinks, then goes down; Haiku is sent Sonnet's signed thinking, which the API says is bound
    to a different conversation: drop_block gets the run past it."""
    monkeypatch.chdir(repo)
    calls = {"n": 0}

    def sonnet_dies_after_one_reply(body: dict[str, Any]) -> fakeapi.HttpError | None:
        if body.get("model") == DEAD:
            calls["n"] += 1
            return fakeapi.overloaded() if calls["n"] > 1 else None
        return None

    script = [
        fakeapi.reply(
            "", [shell("echo one > one.txt && git add -A && git commit -qm one", "toolu_1")], thinking="Plan."
        ),
        fakeapi.reply("", [complete()]),
    ]
    with FakeAnthropic(script, respond=sonnet_dies_after_one_reply) as api:
        bot('fallback_models = ["claude-haiku-4-5"]\napi_patience_minutes = 0')
        code, result, stderr = run({"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": api.base_url})
        bodies = api.bodies
        api.assert_done()
    assert code == 0 and result["status"] == "completed", stderr
    assert [b["model"] for b in bodies] == [DEAD, DEAD, "claude-haiku-4-5", "claude-haiku-4-5"]
    assert bodies[-1]["thinking"]["block_binding"] == {"prefix_mismatch_behavior": "drop_block"}
    assert len(switches()) == 1
