"""openbot killed outright (SIGKILL, the OOM killer) while a confined command runs: the command and what it
started die with it. bwrap's --die-with-parent and PID namespace are the dead-man switch under both walls,
so the shell tool adds no `timeout` process of its own there."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from tests.helpers import make_bot, reply, shell, tool_started, wait_for
from tests.sandbox.conftest import User, needs_bwrap
from tests.sandbox.test_escape_processes import _alive

pytestmark = needs_bwrap


def _lineage(pid: int) -> str:
    """pid, state and command line of a process and each of its ancestors: where a survivor hangs from."""
    chain = []
    while pid > 1:
        try:
            status = dict(
                line.split(":\t", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
            )
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")[:80].decode()
        except (OSError, ValueError):
            break
        chain.append(f"{pid} [{status.get('State', '?')}, ns pids {status.get('NSpid', '?')}] {cmdline}")
        pid = int(status.get("PPid", "0"))
    return " <- ".join(chain)


def test_a_command_dies_with_openbot_killed_by_sigkill(user: User) -> None:
    marker = f"orphan-{os.getpid()}-{time.time_ns()}"  # in the command lines of its processes only
    command = f"sh -c 'sleep 300 # {marker}' & sleep 300 # {marker}"
    make_bot("killed", [reply("", shell(command))])
    proc = user.start("run", "killed")
    try:
        # Both shells running (bash and the sh it started in the background), or openbot gone: then say why.
        wait_for(
            lambda: (tool_started("killed") and len(_alive(marker)) >= 2) or proc.poll() is not None,
            timeout=120,
        )
        assert proc.poll() is None, f"openbot ended before the command ran: {proc.communicate()}"
        os.kill(proc.pid, signal.SIGKILL)  # no handler runs: nothing of openbot's own cleanup happens
        proc.communicate(timeout=30)
        try:
            wait_for(lambda: not _alive(marker), timeout=60)  # bounds for a loaded machine, not a speed test
        except AssertionError:
            raise AssertionError("survivors: " + "; ".join(_lineage(pid) for pid in _alive(marker))) from None
    finally:
        for pid in _alive(marker):  # only when the test fails: leave nothing behind
            os.kill(pid, signal.SIGKILL)
