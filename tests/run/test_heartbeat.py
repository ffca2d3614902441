"""Off a terminal, a long model call says it is waiting (issue 35): the fake API holds its first reply
until the test has read the heartbeat line, so nothing here waits on time (the interval is made short
through OPENBOT_HEARTBEAT_SECS; the test waits for the line, not for the clock)."""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path

from openbot import paths
from openbot.testing.fakeapi import FakeAnthropic, reply
from tests.helpers import make_repo, start_run

KEY = "sk-ant-api03-" + "k" * 40
DONE = {"name": "session_complete", "input": {"summary": "done", "action": "review"}}


def test_a_long_model_call_off_a_terminal_says_it_is_waiting(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    bot = paths.bot_home("slow")
    bot.mkdir(parents=True)
    (bot / "config.md").write_text('+++\nmodel = "claude-sonnet-5-5"\nsleep_secs = 0\n+++\nWork.\n')
    released = threading.Event()

    def hold(body: dict[str, object]) -> None:  # noqa: ARG001
        released.wait(timeout=60)  # the answer waits for the test (bounded: without a heartbeat, it fails)
        return None

    with FakeAnthropic([reply("", tool_calls=[DONE])], respond=hold) as api:
        env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": api.base_url, "OPENBOT_HEARTBEAT_SECS": "0.05"}
        run = start_run("run", "slow", cwd=repo, env={**os.environ, **env}, stdout=subprocess.DEVNULL)
        try:
            assert run.stderr is not None
            seen: list[str] = []
            while not any("waiting for the model" in line for line in seen):
                seen.append(run.stderr.readline())
                assert seen[-1], f"the run said no heartbeat: {seen}"
            released.set()
            rest = run.stderr.read()
            assert run.wait(timeout=120) == 0, "".join(seen) + rest
        finally:
            released.set()
            run.kill()
    beat = next(line for line in seen if "waiting for the model" in line)
    assert beat.strip().startswith("… waiting for the model (") and beat.strip().endswith(" s)")
    assert "waiting for the model" not in rest.split("session completed")[-1]  # not after the answer
