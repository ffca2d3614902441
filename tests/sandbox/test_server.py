"""The agent's commands run in one sandbox server per session (openbot/sandbox/serve.py, issue 36): each
still gets what a sandbox of its own gave it — its exit code, the default signal dispositions, its own
output and nobody else's, a timeout that stops everything it started — through the real CLI, as root and
as nobody."""

from __future__ import annotations

from typing import Any

from tests.helpers import complete, events, make_bot, reply, sessions, shell
from tests.sandbox.conftest import User, needs_bwrap

pytestmark = needs_bwrap

PID1 = 'read -r -a stat < /proc/1/stat; echo "pid 1 from ${stat[21]}"; echo /proc/[0-9]*'


def _commands(bot: str) -> dict[str, dict[str, Any]]:
    return {e["tool_use_id"]: e for e in events(sessions(bot)[-1]) if e["type"] == "command"}


def _timed(command: str, id: str, secs: float) -> dict[str, Any]:
    return {"name": "shell", "id": id, "input": {"command": command, "timeout_secs": secs}}


def test_a_served_command_gets_its_exit_code_signals_and_only_its_own_output(user: User) -> None:
    calls = [
        shell("exit 3", "exit"),
        shell("kill -KILL $$", "killed"),
        shell("no-such-command-here", "missing"),
        shell(
            'yes | head -1 >/dev/null; echo "yes ended ${PIPESTATUS[0]}"; grep SigIgn /proc/self/status',
            "pipe",
        ),
        shell("(sleep 0.3; echo LATE) & echo early", "early"),
        shell("echo next", "next"),
    ]
    make_bot("served", [*(reply("", c) for c in calls), reply("", complete("ok"))])
    out = user.run("run", "served")
    assert out.returncode == 0, out.stderr
    done = _commands("served")
    assert done["exit"]["exit_code"] == 3
    assert done["killed"]["exit_code"] == 137  # 128 + SIGKILL, as bwrap reported it
    assert done["missing"]["exit_code"] == 127
    piped = done["pipe"]["output"]
    assert "yes ended 141" in piped, piped  # 128 + SIGPIPE: the server's Python ignores it, the command not
    ignored = int(piped.split("SigIgn:")[1].split()[0], 16)
    assert not ignored & (1 << (13 - 1)) and not ignored & (1 << (25 - 1)), hex(ignored)  # SIGPIPE, SIGXFSZ
    assert "early" in done["early"]["output"]
    assert done["next"]["output"].strip() == "next"  # what the last one left (LATE) died before it wrote


def test_a_timeout_stops_everything_the_command_started_and_the_next_one_runs(user: User) -> None:
    stubborn = (
        "trap '' TERM; sleep 300 & trap '' TERM; sleep 300"  # survives SIGTERM: SIGKILL after the grace
    )
    calls = [
        shell(PID1, "before"),
        _timed("sleep 300 & sleep 300", "polite", 1),
        shell(PID1, "after-polite"),
        _timed(stubborn, "stubborn", 1),
        shell(PID1, "after-stubborn"),
    ]
    make_bot("timer", [*(reply("", c) for c in calls), reply("", complete("ok"))])
    out = user.run("run", "timer")
    assert out.returncode == 0, out.stderr
    done = _commands("timer")
    assert done["polite"]["timed_out"] and done["stubborn"]["timed_out"]
    before, polite, stubborn_after = (
        done[k]["output"].splitlines() for k in ("before", "after-polite", "after-stubborn")
    )
    assert polite[0] == before[0]  # SIGTERM was enough: the same sandbox runs the next command
    assert len(polite[1].split()) == 2, polite  # pid 1 and the command: nothing left of the sleeps
    # SIGKILL ends the whole sandbox; the next command gets a new one, and nothing else is in it.
    assert stubborn_after[0] != before[0] and stubborn_after[1].split()[0] == "/proc/1", stubborn_after
    assert len(stubborn_after[1].split()) == 2, stubborn_after
