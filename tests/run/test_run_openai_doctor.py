"""`openbot doctor` checks each OpenAI-SDK model's server: key present or not needed, server answering,
model listed — through the real CLI against the loopback stand-in."""

from __future__ import annotations

from pathlib import Path

from openbot.testing.fakeopenai import FakeOpenAI
from tests.helpers import run_cli
from tests.run.test_run_openai import KEY, bot


def lines(out: str, bot_name: str) -> list[str]:
    return [line for line in out.splitlines() if f"model of bot {bot_name} " in line]


def test_doctor_says_for_each_backend_whether_it_can_run(repo: Path, closed_port: int) -> None:
    with FakeOpenAI([], models={"qwen3-coder:latest": {}, "gpt-5.1": {}}) as api:
        bot("local", "ollama:qwen3-coder", f'base_url = "{api.base_url}"')
        bot("unpulled", "ollama:llama9", f'base_url = "{api.base_url}"')
        bot("cloud", "openai:gpt-5.1")
        bot("down", "openai-compatible:coder", f'base_url = "http://127.0.0.1:{closed_port}/v1"')
        bot("claude", "claude-sonnet-5-5")
        with_key = run_cli("doctor", cwd=repo, env={"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": api.base_url})
        without = run_cli("doctor", cwd=repo, env={"OPENAI_API_KEY": "", "OPENAI_BASE_URL": api.base_url})
    out = with_key.stdout
    assert with_key.returncode == 1  # two bots cannot run
    [local] = lines(out, "local")
    assert local.startswith("PASS") and "no key needed" in local and api.base_url in local
    [unpulled] = lines(out, "unpulled")
    assert unpulled.startswith("FAIL") and "ollama pull llama9" in unpulled
    [cloud] = lines(out, "cloud")
    assert cloud.startswith("PASS") and "key OPENAI_API_KEY set" in cloud and "272,000" in cloud
    [down] = lines(out, "down")
    assert down.startswith("FAIL") and "does not answer" in down
    assert not lines(out, "claude")  # the Anthropic key has its own line
    [cloud] = lines(without.stdout, "cloud")
    assert cloud.startswith("FAIL") and "OPENAI_API_KEY is not set" in cloud
    assert KEY not in out + with_key.stderr
