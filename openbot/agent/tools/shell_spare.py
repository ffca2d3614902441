"""A confined shell started ahead of its command, so the sandbox's start-up is off the round trip.

bwrap (namespaces, ~7 ms) and the Landlock launcher (a Python start, ~11 ms) cost more than openbot's
whole own work per tool call. After each command the shell tool starts the next sandbox at once: it
boots on the other core while openbot talks to the model, applies its policy, and waits on a pipe
(`launch.py --command-fd=N`). When the model asks for a command, openbot sends the working directory,
argv and environment down the pipe and the launcher execs it: the command starts within a millisecond.

A spare is used only for the policy and directory it was started for; one that died, or belongs to
another policy, is discarded and a new one started on the spot. Nothing changes for the command: the
same walls, its own process group (the spare's), its own PID namespace, output on a pipe. An unused
spare dies with openbot (bwrap's --die-with-parent) or when the tool is garbage-collected.
"""

from __future__ import annotations

import os
import signal
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openbot import gate

if TYPE_CHECKING:
    from openbot.sandbox import SandboxPolicy


@dataclass
class Spare:
    proc: gate.Popen[bytes]
    command_fd: int  # the write end of the pipe the launcher waits on
    key: tuple[object, ...]


def key_of(policy: SandboxPolicy, cwd: Path) -> tuple[object, ...]:
    """What a spare is kept for: the policy and the directory it was started with."""
    return (policy, str(cwd))


def start(
    policy: SandboxPolicy,
    cwd: Path,
    env: dict[str, str],
    contained: bool,
    step: gate.Step = gate.AGENT_COMMAND,
) -> Spare:
    """A sandbox waiting for its command (for `step`: the agent's, setup's, verification's); OSError when
    it cannot be started."""
    read_end, write_end = os.pipe()
    try:
        argv = policy.wrap([], launcher_options=[f"--command-fd={read_end}"])
        # Inside bwrap the command gets a session of its own from bwrap (--new-session); a plain new
        # group lets CPython spawn with vfork. Outside, setsid here: no controlling terminal.
        group: dict[str, Any] = {"process_group": 0} if contained else {"start_new_session": True}
        proc = gate.popen(
            step,
            argv,
            cwd=cwd,
            env=env,
            stdin=gate.DEVNULL,
            stdout=gate.PIPE,
            stderr=gate.STDOUT,
            pass_fds=(read_end,),
            **group,
        )
    except BaseException:
        os.close(write_end)
        raise
    finally:
        os.close(read_end)
    return Spare(proc, write_end, key_of(policy, cwd))


def send(spare: Spare, cwd: Path, argv: list[str], env: dict[str, str]) -> None:
    """Hand the command to the waiting launcher (OSError if it is gone)."""
    fields = [str(cwd), str(len(argv)), *argv, *(f"{k}={v}" for k, v in env.items())]
    data = b"\0".join(os.fsencode(f) for f in fields)
    try:
        while data:
            data = data[os.write(spare.command_fd, data) :]
    finally:
        os.close(spare.command_fd)
        spare.command_fd = -1


def discard(spare: Spare) -> None:
    """Stop an unused spare and reap it."""
    if spare.command_fd >= 0:
        os.close(spare.command_fd)  # the launcher reads end-of-file and exits without running anything
        spare.command_fd = -1
    try:
        os.killpg(spare.proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    spare.proc.wait()
    if spare.proc.stdout is not None:
        spare.proc.stdout.close()


class Spares:
    """At most one spare, kept for the next command."""

    def __init__(self, step: gate.Step = gate.AGENT_COMMAND) -> None:
        self.step = step
        self.spare: Spare | None = None
        self._finalizer: Any = None

    def take(self, policy: SandboxPolicy, cwd: Path, env: dict[str, str], contained: bool) -> Spare:
        """The waiting spare if it fits and is alive, else a new one."""
        spare = self.waiting(policy, cwd)
        if spare is None:
            self.close()  # a spare that does not fit, or died, is discarded
            spare = start(policy, cwd, env, contained, self.step)
        return spare

    def waiting(self, policy: SandboxPolicy, cwd: Path) -> Spare | None:
        """The waiting spare, taken, if it fits and is alive; else None, and nothing is started or stopped."""
        spare = self.spare
        if spare is None or spare.key != key_of(policy, cwd) or spare.proc.poll() is not None:
            return None
        self.spare = None
        if self._finalizer is not None:
            self._finalizer.detach()
        return spare

    def stop(self) -> None:
        """Kill the waiting spare now, without waiting for it (`close` reaps it): the run is ending, and
        the rest of its start would take a core from openbot's own end."""
        spare = self.spare
        if spare is None:
            return
        if spare.command_fd >= 0:
            os.close(spare.command_fd)
            spare.command_fd = -1
        try:
            os.killpg(spare.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def close(self) -> None:
        if self._finalizer is not None:
            self._finalizer()  # discards the spare, once
        self.spare, self._finalizer = None, None

    def prepare(self, policy: SandboxPolicy, cwd: Path, env: dict[str, str], contained: bool) -> None:
        """Start the spare for the next command (a failure here only means the next one starts cold)."""
        try:
            self.spare = start(policy, cwd, env, contained, self.step)
        except OSError:
            return
        self._finalizer = weakref.finalize(self, discard, self.spare)
