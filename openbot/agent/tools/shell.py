"""The `shell` tool: run one bash command in the worktree, confined by the sandbox, output compacted.

Each command gets its own process group (so a timeout or Ctrl-C stops everything it started), stdin from
/dev/null (nothing can wait for input overnight), and the allowlisted environment. Output is redacted
line by line (ctx.redact), then streams to `<session_dir>/outputs/<tool_use_id>.log` while an
OutputCompactor keeps only what the model will see; the file is kept only when the model saw a compacted
version, so it can read the rest with sed. Redacting first keeps secrets out of both the file and the
excerpts (secrets that span a newline are not recognised; see redact.StreamRedactor).
"""

from __future__ import annotations

import fcntl
import os
import re
import selectors
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from openbot.agent.compact import OutputCompactor
from openbot.agent.models.base import ToolSpec
from openbot.agent.tools.base import ToolContext, ToolFailed, ToolOutput
from openbot.events import Command, CommandStarted
from openbot.paths import make_private_dir
from openbot.redact import StreamRedactor

CHUNK = 1 << 20
PIPE_SIZE = 1 << 20  # a bigger pipe means fewer, larger reads when a command floods output
POLL_SECS = 0.1  # how often cancellation and the deadline are checked
KILL_GRACE_SECS = 2.0  # SIGTERM first; SIGKILL whatever is left after this
DRAIN_SECS = 0.5  # after bash exits, how long a background process may keep the output pipe open

DESCRIPTION = "\n".join(
    [
        "Run a bash command in the working directory (the repository worktree); returns its exit code and",
        "output (stdout and stderr merged).",
        "- Each call is a fresh `bash -c`: `cd` and variables do not carry over; chain with && instead.",
        "- stdin is /dev/null: never run anything that waits for input (use --yes / non-interactive flags).",
        "- Default timeout {timeout:g} s; pass timeout_secs for long builds or test suites. On timeout every",
        "  process the command started is killed.",
        "- Processes left running in the background are stopped when the command finishes.",
        "- Long output is compacted: you get the start, the end and error-looking lines, plus the path of a",
        "  file with the full output (read parts of it with sed -n 'A,Bp' or grep -n).",
    ]
)

# coreutils `timeout` wraps every command a few seconds past its own deadline, so that a command never
# outlives it even when openbot cannot enforce it (openbot killed with SIGKILL, the machine's OOM killer).
_TIMEOUT_BIN = shutil.which("timeout")
DEAD_MAN_GRACE_SECS = 5


def _spec(default_timeout: float) -> ToolSpec:
    return ToolSpec(
        name="shell",
        description=DESCRIPTION.format(timeout=default_timeout),
        input_schema={
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The bash command (may span several lines)."},
                "timeout_secs": {"type": "number", "description": "Kill it after this many seconds."},
            },
            "required": ["command"],
            "additionalProperties": False,
        },
    )


def _exited(proc: subprocess.Popen[bytes]) -> bool:
    """Has the process exited? Leaves it unreaped, so its pid (= the group id) cannot be reused yet."""
    if not hasattr(os, "waitid"):  # not Linux: reaping opens a tiny pid-reuse window, nothing worse
        return proc.poll() is not None
    try:
        return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _group_alive(pgid: int) -> bool:
    """Is any process of the group still running (zombies do not count)? Reads /proc; Linux only."""
    pids = [p for p in os.listdir("/proc") if p.isdigit()]
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 2 and fields[2] == str(pgid).encode() and fields[0] != b"Z":
            return True
    return False


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _stop_group(pgid: int) -> None:
    """SIGTERM every process left in the group, then SIGKILL after KILL_GRACE_SECS if any remain."""
    if not os.path.exists("/proc/self/stat"):  # no way to tell who is left: no grace period
        _signal_group(pgid, signal.SIGKILL)
        return
    if not _group_alive(pgid):
        return
    _signal_group(pgid, signal.SIGTERM)
    deadline = time.monotonic() + KILL_GRACE_SECS
    while time.monotonic() < deadline:
        if not _group_alive(pgid):
            return
        time.sleep(0.05)
    _signal_group(pgid, signal.SIGKILL)


class _Run:
    """One running command: pumps its output to the log file and the compactor until it is done."""

    def __init__(
        self, proc: subprocess.Popen[bytes], log_fd: int, compactor: OutputCompactor, redactor: StreamRedactor
    ) -> None:
        self.proc = proc
        self.log_fd = log_fd
        self.compactor = compactor
        self.redactor = redactor
        self.killed = ""  # "" | "timeout" | "cancelled"

    def _read(self, fd: int) -> bool:
        """Read one chunk; False at end of output."""
        data = os.read(fd, CHUNK)
        if data:
            self._keep(self.redactor.feed(data))
        return bool(data)

    def _keep(self, data: bytes) -> None:
        if data:
            os.write(self.log_fd, data)
            self.compactor.feed(data)

    def pump(self, deadline: float, cancel: Any) -> None:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        try:
            fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_SIZE)
        except OSError:
            pass  # above /proc/sys/fs/pipe-max-size: the default size works, just slower
        sel = selectors.DefaultSelector()
        sel.register(fd, selectors.EVENT_READ)
        pid, is_open = self.proc.pid, True
        exited_at = killed_at = 0.0
        sigkilled = False
        try:
            while True:
                now = time.monotonic()
                if not self.killed and (cancel.is_set() or now >= deadline):
                    self.killed = "cancelled" if cancel.is_set() else "timeout"
                    killed_at = now
                    _signal_group(pid, signal.SIGTERM)
                elif self.killed and not sigkilled and now - killed_at > KILL_GRACE_SECS:
                    sigkilled = True
                    _signal_group(pid, signal.SIGKILL)
                if not exited_at and _exited(self.proc):
                    exited_at = now
                if exited_at and (not is_open or now - exited_at > DRAIN_SECS):
                    break
                if not is_open:
                    time.sleep(POLL_SECS / 2)
                elif sel.select(POLL_SECS):
                    is_open = self._read(fd)
            _stop_group(pid)
            # Whatever is still buffered in the pipe, without waiting on an escaped writer.
            while is_open and sel.select(0):
                is_open = self._read(fd)
            self._keep(self.redactor.flush())
        finally:
            sel.close()
            self.proc.stdout.close()
            if not exited_at:
                _signal_group(pid, signal.SIGKILL)
            self.proc.wait()


class ShellTool:
    reports_itself = True  # emits Command events itself

    def __init__(self, default_timeout_secs: float = 600.0) -> None:
        self.spec = _spec(default_timeout_secs)

    def run(self, input: dict[str, Any], ctx: ToolContext, tool_use_id: str) -> ToolOutput:
        command: str = input["command"]
        timeout = _timeout(input, ctx)
        out_dir = make_private_dir(ctx.session_dir / "outputs")
        log_path = out_dir / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', tool_use_id) or 'command'}.log"
        compactor = OutputCompactor(str(log_path))
        log_fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        argv = ["bash", "-c", command]
        if _TIMEOUT_BIN:  # a dead-man switch: should openbot itself be killed, the command still stops
            argv = [_TIMEOUT_BIN, "--kill-after=5", f"{int(timeout) + DEAD_MAN_GRACE_SECS}", *argv]
        env = dict(ctx.env)
        if ctx.sandbox is not None:
            # stdout is the log file: `> /dev/stdout` reopens it by path, so it must be writable.
            argv = ctx.sandbox.wrap(argv, also_writable=[log_path])
            env.update(ctx.sandbox.env())

        ctx.sink.emit(CommandStarted(command=command))
        ctx.command_count += 1
        started = time.monotonic()
        try:
            run = _start(argv, env, ctx.workdir, log_fd, compactor, StreamRedactor(ctx.redact))
            run.pump(started + timeout, ctx.cancel)
        except ToolFailed:
            log_path.unlink(missing_ok=True)
            raise
        finally:
            os.close(log_fd)
        duration_ms = int((time.monotonic() - started) * 1000)
        output = compactor.result()
        if not compactor.compacted:
            log_path.unlink(missing_ok=True)
        exit_code = None if run.killed else run.proc.returncode
        ctx.sink.emit(
            Command(
                tool_use_id=tool_use_id,
                command=command,
                exit_code=exit_code,
                duration_ms=duration_ms,
                output=output,
                output_bytes=compactor.total_bytes,
                full_output_path=str(log_path) if compactor.compacted else "",
                timed_out=run.killed == "timeout",
            )
        )
        head = _head(run.killed, timeout, exit_code)
        return ToolOutput(f"{head}\n{output}" if output else head, is_error=bool(run.killed))


def _timeout(input: dict[str, Any], ctx: ToolContext) -> float:
    timeout = float(input.get("timeout_secs", ctx.default_timeout_secs))
    if not timeout > 0:
        raise ToolFailed(f"timeout_secs must be positive, got {input.get('timeout_secs')!r}")
    if ctx.deadline is not None:  # no command outlives the run's wall-time budget (max_minutes)
        timeout = min(timeout, ctx.deadline - time.monotonic())
        if timeout <= 0:
            raise ToolFailed("the run's time budget (max_minutes) is used up: no more commands")
    return timeout


def _head(killed: str | None, timeout: float, exit_code: int | None) -> str:
    if killed == "timeout":
        return f"killed: timed out after {timeout:g} s (every process the command started was stopped)"
    if killed:
        return "killed: cancelled by the user"
    return f"exit code: {exit_code}"


def _start(
    argv: list[str],
    env: dict[str, str],
    cwd: Path,
    log_fd: int,
    compactor: OutputCompactor,
    redactor: StreamRedactor,
) -> _Run:
    try:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as e:
        raise ToolFailed(f"could not start the command: {e}") from None
    return _Run(proc, log_fd, compactor, redactor)
