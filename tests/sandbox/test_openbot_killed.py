"""openbot killed outright (SIGKILL, the OOM killer) while a confined command runs: the command and what it
started die with it. bwrap's --die-with-parent and PID namespace are the dead-man switch under both walls,
so the shell tool adds no `timeout` process of its own there."""

from __future__ import annotations

import array
import fcntl
import os
import shutil
import signal
import subprocess
import termios
import time
from pathlib import Path

import pytest

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


# pid 1 of the command's PID namespace dies when bwrap does, which dies with openbot: the parent-death
# signal is the switch. bwrap's init armed it only after forking the command's side (bwrap.c, do_init): an
# init the scheduler left waiting armed it after openbot was killed, and the command survived (issue 22).
# With --as-pid-1 (issue 36) there is no such init: bwrap arms pid 1 (the launcher) before exec'ing it —
# still too late when openbot died first. The hook below makes pid 1 arm only once the file ARM_AFTER
# names exists (read at load time: bwrap drops the variable itself); where that file's directory is not in
# the sandbox (openbot's probe of bwrap) it does nothing.
SLOW_INIT = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>
static char gate[4096], gate_dir[4096];
__attribute__((constructor)) static void load(void) {
    const char *path = getenv("ARM_AFTER");
    if (path) {
        strncpy(gate, path, sizeof gate - 1);
        strncpy(gate_dir, path, sizeof gate_dir - 1);
        dirname(gate_dir);
    }
}
int prctl(int option, ...) {
    va_list ap;
    va_start(ap, option);
    unsigned long a = va_arg(ap, unsigned long), b = va_arg(ap, unsigned long),
                  c = va_arg(ap, unsigned long), d = va_arg(ap, unsigned long);
    va_end(ap);
    if (option == PR_SET_PDEATHSIG && getpid() == 1 && gate[0] && access(gate_dir, F_OK) == 0)
        while (access(gate, F_OK) != 0)
            usleep(10000);
    int (*real)(int, ...) = (int (*)(int, ...))dlsym(RTLD_NEXT, "prctl");
    return real(option, a, b, c, d);
}
"""


def _launchers(base: Path) -> list[int]:
    """Pids of the sandbox launchers of a run under `base` (waiting for its command or to be armed)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = cmdline.read_bytes()
        except OSError:
            continue
        if b"launch.py" in args and str(base).encode() in args:
            found.append(int(cmdline.parent.name))
    return found


def _command_sent(base: Path) -> bool:
    """openbot has written a command into the pipe a launcher of this run has not read yet."""
    for pid in _launchers(base):
        args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        fds = [a.removeprefix(b"--command-fd=") for a in args if a.startswith(b"--command-fd=")]
        try:
            fd = os.open(f"/proc/{pid}/fd/{int(fds[0])}", os.O_RDONLY | os.O_NONBLOCK)
        except (OSError, IndexError, ValueError):
            continue
        try:
            queued = array.array("i", [0])
            fcntl.ioctl(fd, termios.FIONREAD, queued)
        finally:
            os.close(fd)
        if queued[0] > 0:
            return True
    return False


@pytest.mark.skipif(not shutil.which("cc"), reason="no C compiler to build the slow-init hook")
def test_a_command_dies_with_openbot_even_when_bwraps_init_arms_late(user: User) -> None:
    hook = user.base / "hook"
    hook.mkdir()
    (hook / "slow_init.c").write_text(SLOW_INIT)
    subprocess.run(
        ["cc", "-shared", "-fPIC", "-o", hook / "slow_init.so", hook / "slow_init.c", "-ldl"], check=True
    )
    gate = user.openbot_home / "arm"  # bound into the command's sandbox read-only: the init sees it appear
    wrapper = hook / "bwrap"  # first on openbot's PATH; the command itself runs without the hook
    wrapper.write_text(
        f"#!/bin/sh\nARM_AFTER={gate} LD_PRELOAD={hook}/slow_init.so "
        f'exec {shutil.which("bwrap")} --unsetenv LD_PRELOAD --unsetenv ARM_AFTER "$@"\n'
    )
    wrapper.chmod(0o755)
    marker = f"orphan-{os.getpid()}-{time.time_ns()}"
    command = f"sh -c 'sleep 300 # {marker}' & sleep 300 # {marker}"
    make_bot("killed", [reply("", shell(command))])
    proc = user.start("run", "killed", env={"PATH": f"{hook}:{os.environ['PATH']}"})
    try:
        # The command is in its sandbox, held back before the launcher starts; pid 1 has not armed.
        wait_for(
            lambda: len(_alive(marker)) >= 2 or _command_sent(user.base) or proc.poll() is not None,
            timeout=120,
        )
        assert proc.poll() is None, f"openbot ended before the command was sent: {proc.communicate()}"
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=30)
        gate.touch()  # pid 1 arms now, with openbot and bwrap gone: too late to stop anything
        wait_for(lambda: not _launchers(user.base), timeout=60)  # each ran its command or refused to
        survivors = _alive(marker)
        assert not survivors, "survivors: " + "; ".join(_lineage(pid) for pid in survivors)
    finally:
        gate.touch()
        for pid in _alive(marker):  # only when the test fails: leave nothing behind
            os.kill(pid, signal.SIGKILL)
