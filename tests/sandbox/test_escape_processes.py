"""Issue 10: a `setsid nohup …&` child outlived the command, the run and openbot, keeping the sandbox's
write grants. In its own PID namespace (bwrap --unshare-pid --die-with-parent) it dies with the command."""

from __future__ import annotations

import os
import time
from pathlib import Path

from tests.helpers import complete, events, make_bot, reply, sessions, shell, wait_for
from tests.sandbox.conftest import User, needs_bwrap

pytestmark = needs_bwrap


def _alive(marker: str) -> list[int]:
    """Host pids of live (not zombie) processes whose command line contains `marker`."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if marker.encode() in cmdline.read_bytes():
                if (cmdline.parent / "stat").read_text().rsplit(") ", 1)[1][0] != "Z":
                    found.append(int(cmdline.parent.name))
        except (OSError, IndexError):
            continue
    return found


def _command_done(bot: str, tool_use_id: str) -> bool:
    found = sessions(bot)
    log = found[-1] / "events.jsonl" if found else None
    if log is None or not log.exists():
        return False
    return any(e["type"] == "command" and e["tool_use_id"] == tool_use_id for e in events(found[-1]))


def test_a_detached_child_dies_with_its_command(user: User) -> None:
    marker = f"escapee-{os.getpid()}-{time.time_ns()}"  # in the command lines of its processes only
    skills = user.openbot_home / "bots" / "escapee" / "skills"
    scribble = skills / "late.md"
    # Detached three ways (new session, nohup, background) and writing into the bot's skills dir, which
    # the sandbox grants and which outlives the run.
    loop = f"while :; do date > {scribble}; sleep 0.2; done # {marker}"
    escape = f"setsid nohup sh -c '{loop}' >/dev/null 2>&1 </dev/null & sleep 0.5; echo started"
    make_bot(
        "escapee",
        [reply("", shell(escape, "escape")), reply("", shell("sleep 3", "hold")), reply("", complete())],
    )
    proc = user.start("run", "escapee")
    try:
        wait_for(lambda: _command_done("escapee", "escape"))
        assert scribble.exists()  # the child did start, inside the sandbox
        # Right after its command returned, while the run goes on, the child is gone.
        wait_for(lambda: not _alive(marker), timeout=5)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        for pid in _alive(marker):  # only when the test fails: leave nothing behind
            os.kill(pid, 9)
    assert proc.returncode == 0, err
    scribble.unlink()
    time.sleep(1)  # a survivor rewrites it every 0.2 s
    assert not scribble.exists() and not _alive(marker)
