"""An interactive run (stdin is a terminal): typed lines reach the agent mid-turn and wake the sleep."""

from __future__ import annotations

import json
import os
import pty
import time
from pathlib import Path

from tests.helpers import (
    complete,
    events,
    make_bot,
    metadata,
    reply,
    sessions,
    shell,
    start_run,
    tool_started,
    wait_for,
)


def test_typed_lines_reach_the_agent_and_wake_the_sleep(repo: Path) -> None:
    make_bot(
        "chat",
        [reply("", shell("sleep 2")), reply("first iteration done"), reply("", complete("ok"))],
        config="sleep_secs = 60\nmax_iterations = 3",
    )
    master, slave = pty.openpty()
    proc = start_run("run", "chat", "--json", cwd=repo, stdin=slave)
    os.close(slave)
    try:
        wait_for(lambda: tool_started("chat"))
        os.write(master, b"mid-turn note\n")
        wait_for(lambda: metadata(sessions("chat")[0])["status"] == "completed")
        started_sleep = time.monotonic()
        os.write(master, b"wake up and finish\n")
        stdout, stderr = proc.communicate(timeout=30)
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, stderr
    assert time.monotonic() - started_sleep < 20  # the 60 s sleep was cut short by the typed line
    first, second = sessions("chat")
    assert [e["text"] for e in events(first) if e["type"] == "user_input"] == ["mid-turn note"]
    # the line that woke the sleep is the second session's input, recorded as such (docs/EVENTS.md)
    assert [e["text"] for e in events(second) if e["type"] == "user_input"] == ["wake up and finish"]
    convo = next(Path(os.environ["OPENBOT_HOME"]).glob("bots/chat/workspaces/*/runs/*/conversation.jsonl"))
    text = convo.read_text()
    assert "typed while you work]\\nmid-turn note" in text
    assert "# Input from the user\\nwake up and finish" in text
    assert json.loads(stdout)["iterations"] == 2
