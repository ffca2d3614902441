"""One sandbox for all of a session's commands: the agent's shell sends each command to a server that is
pid 1 of a bwrap sandbox (sandbox/serve.py), which spawns it — one new process per command, no bwrap and no
Python start on the round trip, a few milliseconds of CPU less per command for a loaded machine to find.

The server is started when a session opens (`ShellTool.warm`) and kept while the policy is the same;
its stdout is the pipe every command's output comes through, its status pipe says when a command has
ended (and everything it started with it). A timeout or a cancel asks the server to SIGTERM everything
but itself; the SIGKILL after the grace kills the server itself (bwrap with it), and the next command
starts a new one. Closing the command pipe (openbot's exit or death included) ends the server and its
namespace.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import struct
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from openbot import gate
from openbot.processes import reap_orphans

if TYPE_CHECKING:
    from openbot.sandbox import SandboxPolicy

GONE = 125  # the server died before it reported the command's end


@dataclass
class Server:
    proc: gate.Popen[bytes]
    command_fd: int  # write end of the requests pipe
    status_fd: int  # read end of the exit-code pipe
    policy: SandboxPolicy

    def alive(self) -> bool:
        return self.command_fd >= 0 and self.proc.poll() is None

    def send(self, *fields: str) -> None:
        """One request (OSError when the server is gone)."""
        data = b"\0".join(os.fsencode(f) for f in fields)
        data = struct.pack(">I", len(data)) + data
        while data:
            data = data[os.write(self.command_fd, data) :]

    def run(self, cwd: Path, argv: list[str], env: dict[str, str]) -> None:
        self.send("run", str(cwd), str(len(argv)), *argv, *(f"{k}={v}" for k, v in env.items()))

    def kill(self) -> None:
        """Kill the server: bwrap, and with it (--die-with-parent) pid 1 and its whole namespace."""
        if self.command_fd >= 0:
            os.close(self.command_fd)  # a server that missed the signal reads end-of-file and ends all
            self.command_fd = -1
        if self.proc.returncode is not None:
            return  # reaped already: its pid may be another process's now
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)

    def close(self) -> None:
        """Stop the server (whatever runs in it dies with its namespace) and reap it."""
        self.kill()
        self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        if self.status_fd >= 0:
            os.close(self.status_fd)
            self.status_fd = -1
        reap_orphans()  # its pid 1, orphaned to openbot as bwrap died


def start(policy: SandboxPolicy, cwd: Path, env: dict[str, str], step: gate.Step) -> Server:
    """A server for `policy`'s commands (OSError when it cannot be started)."""
    command_read, command_write = os.pipe()
    status_read, status_write = os.pipe()
    try:
        argv = policy.wrap(
            [], launcher_options=[f"--command-fd={command_read}", f"--status-fd={status_write}"]
        )
        proc = gate.popen(
            step,
            argv,
            cwd=cwd,
            env=env,
            stdin=gate.DEVNULL,
            stdout=gate.PIPE,
            stderr=gate.STDOUT,
            pass_fds=(command_read, status_write),
            process_group=0,  # bwrap gives the sandbox a session of its own (--new-session)
        )
    except BaseException:
        os.close(command_write)
        os.close(status_read)
        raise
    finally:
        os.close(command_read)
        os.close(status_write)
    return Server(proc, command_write, status_read, policy)


class Served:
    """One command of a server, as shell_process._Run drives it."""

    drained_at_exit = True  # everything that could write its output is dead once the status is read

    def __init__(self, server: Server) -> None:
        self.server = server
        self.returncode: int | None = None
        self.dead = False  # the server ended without a status

    def output_fd(self) -> int:
        assert self.server.proc.stdout is not None
        return self.server.proc.stdout.fileno()

    def exit_fd(self) -> int:
        return self.server.status_fd

    def exited(self) -> bool:
        if self.returncode is not None:
            return True
        if not select.select([self.server.status_fd], [], [], 0)[0]:
            return False
        line = os.read(self.server.status_fd, 64)
        self.returncode = int(line) if line.strip().isdigit() else GONE
        self.dead = not line  # it died: no status will come, nor another command
        return True

    def signal(self, signum: int) -> None:
        if signum == signal.SIGKILL:  # it did not end on SIGTERM: end the whole sandbox
            self.server.kill()
            return
        with contextlib.suppress(OSError):
            self.server.send("sig", str(int(signum)))

    def stop_rest(self) -> None:
        """Nothing to stop: the server killed everything the command left before it reported its end."""

    def finish(self, exited: bool) -> None:
        if not exited or self.dead:
            self.server.close()


def output_of(server: Server, cwd: Path, argv: list[str], env: dict[str, str], secs: float = 60.0) -> str:
    """`argv`'s output run in `server`, or "" when it failed or took longer than `secs` (then the server is
    stopped): for openbot's own quick looks into the agent's checkout (verification's `git status`)."""
    cmd, out = Served(server), bytearray()
    deadline = time.monotonic() + secs
    try:
        server.run(cwd, argv, env)
        fd = cmd.output_fd()
        while not cmd.exited():
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            if fd in select.select([fd, server.status_fd], [], [], left)[0]:
                out += os.read(fd, 1 << 16)
        while select.select([fd], [], [], 0)[0] and (chunk := os.read(fd, 1 << 16)):
            out += chunk
    except OSError:  # TimeoutError included
        server.close()
        return ""
    if cmd.dead:
        server.close()
    return out.decode(errors="replace") if cmd.returncode == 0 else ""
