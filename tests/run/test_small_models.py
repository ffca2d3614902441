"""What a small local model needs, through the real CLI against the loopback servers: sampling keys where
the API takes them (and exit 2 where it does not); time for a CPU server to read the prompt."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from openbot import paths
from openbot.testing.fakeopenai import FakeOpenAI, reply
from tests.helpers import events, run_cli, sessions
from tests.run import qwen_replies as qwen

MODEL = "qwen2.5-coder-1.5b"
SAMPLING = "temperature = 0.2\ntop_p = 0.9\nseed = 42"

# These tests are of tool calls: the work mode a local model gets by default is edits (test_edit_mode.py).
TOOLS = 'work_mode = "tools"\n'


def bot(model: str, config: str = "") -> None:
    """These bots complete at once, with nothing changed: not what they test, so not questioned."""
    d = paths.bot_home("small")
    d.mkdir(parents=True, exist_ok=True)
    (d / "config.md").write_text(
        f'+++\nmodel = "{model}"\nsleep_secs = 0\nmax_iterations = 1\nquestion_unchanged = false\n'
        f"{TOOLS}{config}\n+++\nFix calc.py.\n"
    )


def test_sampling_keys_reach_a_chat_completions_server_and_are_absent_unless_set(repo: Path) -> None:
    for config, sent in ((SAMPLING, {"temperature": 0.2, "top_p": 0.9, "seed": 42}), ("", {})):
        with FakeOpenAI([reply(qwen.COMPLETE_FUNCTION)], models={MODEL: {}}) as api:
            bot(f"llamacpp:{MODEL}", f'base_url = "{api.base_url}"\n{config}')
            out = run_cli("run", "small", cwd=repo)
            [body] = api.bodies
        assert out.returncode == 0, out.stderr
        assert {k: body[k] for k in ("temperature", "top_p", "seed") if k in body} == sent


def test_the_responses_api_gets_temperature_and_top_p(repo: Path) -> None:
    done = {"name": "session_complete", "input": {"summary": "done", "action": "review"}, "id": "c1"}
    with FakeOpenAI([reply("", [done])], models={"gpt-4.1": {}}) as api:  # OpenAI's text is never a call
        bot("openai:gpt-4.1", "temperature = 0.5\ntop_p = 0.8")
        env = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": api.base_url}
        out = run_cli("run", "small", cwd=repo, env=env)
        [body] = api.bodies
    assert out.returncode == 0, out.stderr
    assert body["temperature"] == 0.5 and body["top_p"] == 0.8 and "seed" not in body


@pytest.mark.parametrize(
    ("model", "config", "said"),
    [
        ("claude-sonnet-5-5", "temperature = 0.2", "key 'temperature' does not apply to claude-sonnet-5-5"),
        ("claude-sonnet-5-5", "seed = 1", "Claude's Messages API takes no seed"),
        ("openai:gpt-4.1", "seed = 1", "OpenAI's Responses API takes no seed"),
        (f"llamacpp:{MODEL}", "temperature = 3.0", "key 'temperature' must be 0 or more, up to 2, got 3.0"),
        (f"llamacpp:{MODEL}", "top_p = 0", "key 'top_p' must be more than 0, up to 1, got 0"),
        (f"llamacpp:{MODEL}", 'seed = "x"', "key 'seed' must be an integer, got \"x\""),
    ],
)
def test_a_sampling_key_an_api_does_not_take_is_exit_2(
    repo: Path, model: str, config: str, said: str
) -> None:
    bot(model, config)
    out = run_cli("run", "small", cwd=repo)
    assert out.returncode == 2 and said in out.stderr and "Traceback" not in out.stderr, out.stderr


def test_bots_show_says_an_unset_sampling_key_is_not_set(repo: Path) -> None:
    bot(f"llamacpp:{MODEL}", "seed = 7")
    out = run_cli("bots", "show", "small", cwd=repo)
    lines = {line.split("=")[0].strip(): line for line in out.stdout.splitlines() if "=" in line}
    assert "(not set)" in lines["temperature"] and "= 7" in lines["seed"], out.stdout
    shown = json.loads(run_cli("bots", "show", "small", "--json", cwd=repo).stdout)
    assert shown["config"]["temperature"] is None and shown["config"]["seed"] == 7


def test_a_local_server_reading_the_prompt_in_silence_is_not_a_stall(repo: Path) -> None:
    def prefill(body: dict[str, Any]) -> None:
        time.sleep(3)  # llama-server sends no byte while it reads the prompt (84 s for 2k tokens here)
        return None  # then the scripted reply

    with FakeOpenAI([reply(qwen.COMPLETE_FUNCTION)], models={MODEL: {}}, respond=prefill) as api:
        # the stall timeout alone (1 s) would give up, re-send, and never see a reply
        bot(f"llamacpp:{MODEL}", f'base_url = "{api.base_url}"\nstall_timeout_secs = 1')
        out = run_cli("run", "small", cwd=repo)
        sent = len(api.bodies)
    assert out.returncode == 0 and sent == 1, out.stderr
    [session] = sessions("small")
    assert not [e for e in events(session) if e["type"] == "retry"]


def test_a_bot_offered_fewer_tools_gets_only_those_and_a_prompt_that_names_only_those(repo: Path) -> None:
    with FakeOpenAI([reply(qwen.COMPLETE_FUNCTION)], models={MODEL: {}}) as api:
        bot(f"llamacpp:{MODEL}", f'base_url = "{api.base_url}"\ntools = ["shell", "edit"]')
        out = run_cli("run", "small", cwd=repo)
        [body] = api.bodies
    assert out.returncode == 0, out.stderr
    assert [t["function"]["name"] for t in body["tools"]] == ["shell", "edit", "session_complete"]
    system = body["messages"][0]["content"]
    assert "`edit` views" in system and "`memory`" not in system and "session_history" not in system


def test_an_unknown_tool_name_is_exit_2(repo: Path) -> None:
    bot(f"llamacpp:{MODEL}", 'tools = ["shell", "memroy"]')
    out = run_cli("run", "small", cwd=repo)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "key 'tools' names \"memroy\", which is not a built-in tool" in out.stderr
    assert "did you mean 'memory'?" in out.stderr


def test_bots_show_measures_the_prompt_and_says_it_is_an_estimate(repo: Path) -> None:
    def measured(config: str) -> dict[str, Any]:
        bot(f"llamacpp:{MODEL}", config)
        shown = json.loads(run_cli("bots", "show", "small", "--json", cwd=repo).stdout)
        return dict(shown["prompt_tokens"])

    full, small, text = (
        measured(""),
        measured('tools = ["shell", "edit"]'),
        measured('tool_protocol = "text"'),
    )
    assert full["estimate"] and 800 < full["tools"] < 2000 and 300 < full["system"] < 1000
    assert small["tools"] < full["tools"] * 0.7 and small["system"] < full["system"]
    assert text["tools"] == 0 and text["system"] > full["system"]  # the tools are described in the prompt
    out = run_cli("bots", "show", "small", cwd=repo).stdout
    assert f"prompt: ~{text['system']:,} tokens before any work" in out and "an estimate" in out
