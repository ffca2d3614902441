"""openbot killed outright (SIGKILL, the OOM killer) while a confined command runs: the command and what it
started die with it. bwrap's --die-with-parent and PID namespace are the dead-man switch under both walls,
so the shell tool adds no `timeout` process of its own there."""

from __future__ import annotations

import os
import signal
import time

from tests.helpers import make_bot, reply, shell, tool_started, wait_for
from tests.sandbox.conftest import User, needs_bwrap
from tests.sandbox.test_escape_processes import _alive

pytestmark = needs_bwrap


def test_a_command_dies_with_openbot_killed_by_sigkill(user: User) -> None:
    marker = f"orphan-{os.getpid()}-{time.time_ns()}"  # in the command lines of its processes only
    command = f"sh -c 'sleep 300 # {marker}' & sleep 300 # {marker}"
    make_bot("killed", [reply("", shell(command))])
    proc = user.start("run", "killed")
    try:
        wait_for(lambda: tool_started("killed") and len(_alive(marker)) >= 2, timeout=120)
        os.kill(proc.pid, signal.SIGKILL)  # no handler runs: nothing of openbot's own cleanup happens
        proc.communicate(timeout=30)
        wait_for(lambda: not _alive(marker), timeout=60)  # bounds for a loaded machine, not a speed test
    finally:
        for pid in _alive(marker):  # only when the test fails: leave nothing behind
            os.kill(pid, signal.SIGKILL)
