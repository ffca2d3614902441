"""A confined command costs one new process (issue 36): the agent's commands run in one sandbox per session,
whose pid 1 (the sandbox server, openbot/sandbox/serve.py) forks each of them — no bwrap, no launcher, no
Python start per command. And nothing a command leaves behind outlives it: the server kills and reaps
everything else in its PID namespace before it reports the command's end. Counted inside the namespace
through its own /proc, not timed."""

from __future__ import annotations

import os
import time

from tests.helpers import complete, events, make_bot, reply, sessions, shell
from tests.sandbox.conftest import User, needs_bwrap
from tests.sandbox.test_escape_processes import _alive

pytestmark = needs_bwrap

# Bash builtins only: the listing is taken while nothing but the command (and pid 1) runs in the namespace.
# Field 22 of /proc/1/stat is pid 1's start time: the same one means the same sandbox.
LIST = 'echo /proc/[0-9]*; echo "me /proc/$$"; read -r -a stat < /proc/1/stat; echo "pid 1 from ${stat[21]}"'


def _outputs(bot: str) -> list[list[str]]:
    found = [e["output"].strip() for e in events(sessions(bot)[-1]) if e["type"] == "command"]
    return [o.splitlines() for o in found]


def test_each_command_is_one_new_process_of_the_sessions_sandbox(user: User) -> None:
    make_bot("count", [*(reply("", shell(f"{LIST} # {i}")) for i in range(3)), reply("", complete("ok"))])
    out = user.run("run", "count")
    assert out.returncode == 0, out.stderr
    outputs = _outputs("count")
    # Before: each command was pid 1 of a sandbox of its own ("/proc/1", "me /proc/1"), behind a bwrap
    # and a Python launcher started for it.
    listed = [o[0] for o in outputs]
    assert listed == ["/proc/1 /proc/2", "/proc/1 /proc/3", "/proc/1 /proc/4"], outputs
    assert [o[1] for o in outputs] == ["me /proc/2", "me /proc/3", "me /proc/4"], outputs
    assert len({o[2] for o in outputs}) == 1, outputs  # one pid 1 for all three


def test_nothing_a_command_leaves_behind_outlives_it(user: User) -> None:
    marker = f"leftover-{os.getpid()}-{time.time_ns()}"  # in the command lines of its processes only
    sleeper = f"sh -c 'sleep 300 # {marker}'"
    # Detached every way a command can: a new session, nohup, a double fork, plain background, stopped.
    leave = (
        f"setsid {sleeper} & nohup {sleeper} >/dev/null 2>&1 & ({sleeper} &) ; {sleeper} &"
        f" {sleeper} & kill -STOP $! ; echo left"
    )
    make_bot("leaver", [reply("", shell(leave)), reply("", shell(LIST)), reply("", complete("ok"))])
    try:
        out = user.run("run", "leaver")
        assert out.returncode == 0, out.stderr
        left, listing = _outputs("leaver")
        assert left == ["left"]
        me = listing[1].removeprefix("me ")
        # The next command finds nothing but pid 1 and itself in the namespace.
        assert set(listing[0].split()) == {"/proc/1", me}, listing
        assert not _alive(marker)
    finally:
        for pid in _alive(marker):  # only when the test fails: leave nothing behind
            os.kill(pid, 9)


# Field 41 of /proc/<pid>/stat is the scheduling policy (0 SCHED_OTHER, 3 SCHED_BATCH); comm fields here
# hold no spaces, so bash's word split counts it as index 40.
POLICIES = (
    'read -r -a s < /proc/1/stat; read -r -a c < /proc/$$/stat; echo "server ${s[40]} command ${c[40]}";'
    " cat /proc/self/stat"
)


def test_the_server_does_not_preempt_openbot_and_its_commands_run_as_before(user: User) -> None:
    """The sandbox server is SCHED_BATCH: woken by openbot's request, it waits for openbot to go back to
    waiting instead of preempting it, so the command it spawns is not pushed onto the other core (behind a
    CPU-bound neighbour, docs/BENCHMARKS.md). The commands, and what they start, are SCHED_OTHER as before."""
    make_bot("policy", [reply("", shell(POLICIES)), reply("", complete("ok"))])
    out = user.run("run", "policy")
    assert out.returncode == 0, out.stderr
    [lines] = _outputs("policy")
    assert lines[0] == "server 3 command 0", lines  # before: "server 0 command 0"
    assert lines[1].rsplit(")", 1)[1].split()[38] == "0", lines  # the command's child (cat)
