"""The `shell` tool: run one bash command in the worktree, confined by the sandbox, output compacted.

Each command gets its own process group (so a timeout or Ctrl-C stops everything it started), stdin from
/dev/null (nothing can wait for input overnight), and the allowlisted environment. Output is redacted
line by line (ctx.redact), then streams to `<session_dir>/outputs/<tool_use_id>.log` while an
OutputCompactor keeps only what the model will see; the file is kept only when the model saw a compacted
version, so it can read the rest with sed. Redacting first keeps secrets out of both the file and the
excerpts (secrets that span a newline are not recognised; see redact.StreamRedactor).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import time
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, NotRequired, TypedDict, cast

from openbot import gate
from openbot.agent.models.base import ToolSpec
from openbot.agent.tools import shell_server, shell_spare
from openbot.agent.tools.base import ToolContext, ToolFailed, ToolOutput
from openbot.agent.tools.shell_process import Command as Running
from openbot.agent.tools.shell_process import Popened, _Run
from openbot.agent.tools.trim_output import OutputCompactor
from openbot.events import Command, CommandStarted
from openbot.paths import make_private_dir
from openbot.processes import reap_orphans
from openbot.redact import StreamRedactor

if TYPE_CHECKING:
    from openbot.sandbox import SandboxPolicy

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


class ShellInput(TypedDict):  # what the spec's schema admits (the registry checks it before `run`)
    command: str
    timeout_secs: NotRequired[float]


class ShellTool:
    reports_itself = True  # emits Command events itself

    def __init__(
        self, default_timeout_secs: float = 600.0, step: gate.Step = gate.AGENT_COMMAND, serve: bool = False
    ) -> None:
        """`step`: whose commands these are (the agent's; setup's and verification's own shells). `serve`:
        one sandbox server runs all the commands it can (shell_server.py), not a sandbox each."""
        self.spec = _spec(default_timeout_secs)
        self.step = step
        self.spares = shell_spare.Spares(step)
        self.serve = serve
        self.server: shell_server.Server | None = None
        self._server_finalizer: weakref.finalize[[], ShellTool] | None = None

    def run(self, input: dict[str, object], ctx: ToolContext, tool_use_id: str) -> ToolOutput:
        args = cast(ShellInput, input)
        command, timeout = args["command"], _timeout(args, ctx)
        out_dir = make_private_dir(ctx.session_dir / "outputs")
        log_path = out_dir / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', tool_use_id) or 'command'}.log"
        compactor = OutputCompactor(str(log_path))
        log_fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        argv = ["bash", "-c", command]
        # bwrap's --die-with-parent and PID namespace stop the command should openbot itself be killed;
        # without them, coreutils `timeout` is the dead-man switch (one more process per command).
        contained = ctx.sandbox is not None and ctx.sandbox.confined and bool(ctx.sandbox.bwrap)
        if _TIMEOUT_BIN and not contained:
            argv = [_TIMEOUT_BIN, "--kill-after=5", f"{int(timeout) + DEAD_MAN_GRACE_SECS}", *argv]
        env = dict(ctx.env)
        if ctx.sandbox is not None:
            env.update(ctx.sandbox.env())

        ctx.sink.emit(CommandStarted(command=command, full_output_path=str(log_path)))
        ctx.command_count += 1
        started = time.monotonic()
        try:
            cmd = self._launch(argv, env, ctx, contained, log_path)
            run = _Run(cmd, log_fd, compactor, StreamRedactor(ctx.redact))
            run.pump(started + timeout, ctx.cancel)
        except ToolFailed:
            log_path.unlink(missing_ok=True)
            raise
        finally:
            os.close(log_fd)
        duration_ms = int((time.monotonic() - started) * 1000)
        self._prepare_next(cmd, ctx, env, contained)
        output = compactor.result()
        if not compactor.compacted:
            log_path.unlink(missing_ok=True)
        exit_code = None if run.killed else run.cmd.returncode
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

    def output_in_waiting(
        self, policy: SandboxPolicy, cwd: Path, argv: list[str], env: dict[str, str]
    ) -> str | None:
        """`argv`'s output (or "" when it failed) in the sandbox kept for the next command — the server, or
        the spare — when one fits `policy` and `cwd`; None when there is none (a new sandbox's start would
        be most of a quick look's time). stderr is the output's too."""
        server = self.server
        if server is not None and server.policy == policy and server.alive():
            return shell_server.output_of(server, cwd, argv, env)
        spare = self.spares.waiting(policy, cwd)
        if spare is None:
            return None
        try:
            shell_spare.send(spare, cwd, argv, env)
            out, _ = spare.proc.communicate(timeout=60)
        except (OSError, gate.TimeoutExpired):
            shell_spare.discard(spare)
            return ""
        return out.decode(errors="replace") if spare.proc.returncode == 0 else ""

    def _prepare_next(self, cmd: Running, ctx: ToolContext, env: dict[str, str], contained: bool) -> None:
        """A spare sandbox for the next command, booting while the model answers (a server needs none)."""
        if (
            isinstance(cmd, Popened)
            and ctx.sandbox is not None
            and _spare_fits(ctx)
            and not ctx.cancel.is_set()
        ):
            self.spares.prepare(ctx.sandbox, ctx.workdir, env, contained)

    def stop_waiting(self) -> None:
        """The run is ending: kill the sandboxes waiting for a next command (the server, a spare) at once,
        so they die while openbot writes its records; `close` reaps them."""
        self.spares.stop()
        if self.server is not None:
            self.server.kill()

    def close(self) -> None:
        """Stop the sandbox waiting for a next command (the run is ending); reap what it orphaned."""
        self.spares.close()
        if self._server_finalizer is not None:
            self._server_finalizer()  # closes the server, once
        self.server, self._server_finalizer = None, None
        reap_orphans()

    def warm(self, policy: SandboxPolicy, workdir: Path, env: dict[str, str]) -> None:
        """Start the sandbox server for this policy now (a session opens), so that the first command does
        not wait for bwrap and Python to start; a failure here only means that command starts it."""
        server = self.server
        fits = self.serve and _server_fits_policy(policy)
        if not fits or (server is not None and server.policy == policy and server.alive()):
            return
        self.close()
        try:
            server = self.server = shell_server.start(policy, workdir, {**env, **policy.env()}, self.step)
        except OSError:
            return
        self._server_finalizer = weakref.finalize(self, server.close)

    def _served(
        self, policy: SandboxPolicy, argv: list[str], env: dict[str, str], ctx: ToolContext
    ) -> Running:
        """The command sent to the session's sandbox server (started now when there is none that fits)."""
        server = self.server
        if server is None or server.policy != policy or not server.alive():
            self.close()
            server = self.server = shell_server.start(policy, ctx.workdir, env, self.step)
            self._server_finalizer = weakref.finalize(self, server.close)
        try:
            server.run(ctx.workdir, argv, env)
        except OSError:  # it died while waiting: once more with a fresh one
            self.close()
            server = self.server = shell_server.start(policy, ctx.workdir, env, self.step)
            self._server_finalizer = weakref.finalize(self, server.close)
            server.run(ctx.workdir, argv, env)
        return shell_server.Served(server)

    def _launch(
        self, argv: list[str], env: dict[str, str], ctx: ToolContext, contained: bool, log: Path
    ) -> Running:
        """The command: sent to the sandbox server, or to a spare sandbox, or a sandbox started for it now."""
        try:
            if self.serve and _server_fits(ctx):
                assert ctx.sandbox is not None
                return self._served(ctx.sandbox, argv, env, ctx)
            if _spare_fits(ctx):
                assert ctx.sandbox is not None
                spare = self.spares.take(ctx.sandbox, ctx.workdir, env, contained)
                try:
                    shell_spare.send(spare, ctx.workdir, argv, env)
                except OSError:  # it died while waiting: once more with a fresh one
                    shell_spare.discard(spare)
                    spare = shell_spare.start(ctx.sandbox, ctx.workdir, env, contained, self.step)
                    with contextlib.suppress(OSError):  # the launcher failed: its output and 125 say why
                        shell_spare.send(spare, ctx.workdir, argv, env)
                return Popened(spare.proc, contained)
            # `> /dev/stdout` reopens the output by path; allowed as well for sandboxes without a spare.
            confined = policy_of(ctx).wrap(argv, also_writable=[log])
            return Popened(
                gate.popen(
                    self.step,
                    confined,
                    cwd=ctx.workdir,
                    env=env,
                    stdin=gate.DEVNULL,
                    stdout=gate.PIPE,
                    stderr=gate.STDOUT,
                    start_new_session=True,  # its own group (stopped as one) and no controlling terminal
                ),
                contained,
            )
        except OSError as e:
            raise ToolFailed(f"could not start the command: {e}") from None


def policy_of(ctx: ToolContext) -> SandboxPolicy:
    """The context's sandbox policy; none at all (a tool tested on its own) runs unconfined."""
    from openbot.sandbox import SandboxPolicy

    return ctx.sandbox if ctx.sandbox is not None else SandboxPolicy.unconfined()


def _timeout(args: ShellInput, ctx: ToolContext) -> float:
    timeout = float(args.get("timeout_secs", ctx.default_timeout_secs))
    if not timeout > 0:
        raise ToolFailed(f"timeout_secs must be positive, got {args.get('timeout_secs')!r}")
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


def _server_fits(ctx: ToolContext) -> bool:
    return ctx.sandbox is not None and _server_fits_policy(ctx.sandbox)


def _server_fits_policy(policy: SandboxPolicy) -> bool:
    """Both walls (a server kills everything in its PID namespace after each command: it needs one of its
    own) and no proxy list (whose relay lives in the sandbox beside the commands)."""
    walls = getattr(policy, "landlock", False) and bool(
        getattr(policy, "bwrap", "")
    )  # a stand-in may lack them
    return policy.confined and walls and not getattr(policy, "proxy", "")


def _spare_fits(ctx: ToolContext) -> bool:
    """Confined by the Landlock launcher, which is what waits for a command in a spare."""
    return ctx.sandbox is not None and ctx.sandbox.confined and getattr(ctx.sandbox, "landlock", False)
