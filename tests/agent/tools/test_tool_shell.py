"""The shell tool with real processes: exit codes, compaction, timeouts, cancellation, stdin, env."""

from __future__ import annotations

import os
import re
import threading
import time
import tracemalloc
from collections.abc import Sequence
from pathlib import Path

import pytest

from openbot.agent.tools import shell_process
from openbot.agent.tools.base import ToolContext, ToolOutput
from openbot.agent.tools.registry import default_tools, run_tool
from openbot.agent.tools.shell import ShellTool
from openbot.envpolicy import child_env
from openbot.events import Command, CommandStarted, ListSink, ToolResult
from openbot.gate import Confined
from openbot.redact import REDACTED, Redactor


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    work = tmp_path / "work"
    work.mkdir()
    return ToolContext(
        workdir=work, session_dir=tmp_path / "session", env=child_env(os.environ), sink=ListSink()
    )


def shell(ctx: ToolContext, command: str, tool_use_id: str = "toolu_1", **extra: object) -> ToolOutput:
    return run_tool(default_tools(), "shell", {"command": command, **extra}, ctx, tool_use_id)


def last_command(ctx: ToolContext) -> Command:
    assert isinstance(ctx.sink, ListSink)
    return [e for e in ctx.sink.events if isinstance(e, Command)][-1]


def gone(pid: int) -> bool:
    """No such process, or only a zombie left for init to reap."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except FileNotFoundError:
        return True
    return stat.rsplit(b")", 1)[1].split()[0] == b"Z"


def test_multiline_command_exit_code_and_events(ctx: ToolContext) -> None:
    out = shell(ctx, "echo one\necho two >&2\npwd\nexit 3")
    assert not out.is_error
    assert out.content == f"exit code: 3\none\ntwo\n{ctx.workdir}\n"
    assert shell(ctx, "true").content == "exit code: 0"
    assert isinstance(ctx.sink, ListSink)
    kinds = [type(e) for e in ctx.sink.events]
    assert kinds == [CommandStarted, Command, CommandStarted, Command]  # no ToolResult for the shell
    first = [e for e in ctx.sink.events if isinstance(e, Command)][0]
    assert first.exit_code == 3 and first.output_bytes == len(f"one\ntwo\n{ctx.workdir}\n")
    assert first.full_output_path == "" and not first.timed_out
    assert ctx.command_count == 2
    assert not list((ctx.session_dir / "outputs").iterdir())  # small outputs keep no file


def test_one_megabyte_output_is_compacted_and_saved(ctx: ToolContext) -> None:
    out = shell(ctx, "seq 1 100000; echo 'FAILED: test_widget - boom'; seq 100001 200000", "toolu_big")
    assert out.content.startswith("exit code: 0\n1\n2\n3\n")
    assert len(out.content.encode()) < 16_000
    assert out.content.endswith("199999\n200000")
    assert "100001: FAILED: test_widget - boom" in out.content
    event = last_command(ctx)
    path = Path(event.full_output_path)
    assert path == ctx.session_dir / "outputs" / "toolu_big.log"
    assert re.search(
        rf"\[\.\.\. [\d,]+ lines \(1\.3 MB\) cut; full output: {path} — read it with sed -n", out.content
    )
    full = path.read_text()
    assert len(full) == event.output_bytes > 1_000_000
    assert full.splitlines()[100_000] == "FAILED: test_widget - boom"
    assert path.stat().st_mode & 0o777 == 0o600
    assert event.output == out.content.removeprefix("exit code: 0\n")


def test_hundred_megabytes_of_output_in_bounded_memory(ctx: ToolContext) -> None:
    tracemalloc.start()
    try:
        started = time.monotonic()
        out = shell(ctx, "yes 'a line of build output' | head -c 100000000")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert out.content.startswith("exit code: 0\na line of build output\n")
    assert last_command(ctx).output_bytes == 100_000_000
    assert peak < 16_000_000, f"peak Python memory {peak:,} bytes"
    assert time.monotonic() - started < 20


# The grace before SIGKILL, made long in the tests below that must not need it: then "did not wait for
# it" is told apart by 30 s of margin, not by a second or two a loaded machine can eat.
LONG_GRACE = 60.0


def test_timeout_kills_the_whole_process_group(ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shell_process, "KILL_GRACE_SECS", LONG_GRACE)
    started = time.monotonic()
    out = shell(ctx, "sleep 100 & echo $!; sleep 100; wait", timeout_secs=0.5)
    assert time.monotonic() - started < LONG_GRACE / 2  # SIGTERM ended both sleeps
    assert out.is_error and out.content.startswith("killed: timed out after 0.5 s")
    grandchild = int(out.content.splitlines()[1])
    deadline = time.monotonic() + 2
    while not gone(grandchild) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert gone(grandchild)
    event = last_command(ctx)
    assert event.exit_code is None and event.timed_out


def test_background_processes_do_not_outlive_the_command(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shell_process, "KILL_GRACE_SECS", LONG_GRACE)
    started = time.monotonic()
    out = shell(ctx, "sleep 100 > /dev/null & echo $!")
    assert out.content.startswith("exit code: 0\n")
    assert time.monotonic() - started < LONG_GRACE / 2  # SIGTERM ended the leftover sleep
    assert gone(int(out.content.splitlines()[1]))


# SIGTERM suffices for the first (a long grace it must not wait for); the second ignores it and is
# SIGKILLed after a short grace — both far inside 30 s, and far from the command's own 100 s.
@pytest.mark.parametrize("command, grace", [("sleep 100", LONG_GRACE), ("trap '' TERM; sleep 100", 1.0)])
def test_cancel_from_another_thread(
    ctx: ToolContext, command: str, grace: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shell_process, "KILL_GRACE_SECS", grace)
    threading.Timer(0.3, ctx.cancel.set).start()
    started = time.monotonic()
    out = shell(ctx, command)
    assert time.monotonic() - started < LONG_GRACE / 2
    assert out.is_error and out.content.startswith("killed: cancelled")
    event = last_command(ctx)
    assert event.exit_code is None and not event.timed_out


def test_stdin_is_dev_null(ctx: ToolContext) -> None:
    started = time.monotonic()
    out = shell(ctx, 'cat; read -r line; echo "read status $?"', timeout_secs=5)
    assert out.content == "exit code: 0\nread status 1\n"
    assert time.monotonic() - started < 2


def test_environment_has_no_secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-never-in-child-env")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-secret-never-in-child-env")
    monkeypatch.setenv("MYTOOL_HOME", "/opt/mytool")
    monkeypatch.setenv("MYTOOL_MODE", "fast")
    ctx = ToolContext(workdir=tmp_path, session_dir=tmp_path / "s", env=child_env(os.environ, ["MYTOOL_*"]))
    out = shell(ctx, "env").content
    assert "never-in-child-env" not in out and "ANTHROPIC_API_KEY" not in out
    assert f"PATH={os.environ['PATH']}\n" in out and f"HOME={os.environ['HOME']}\n" in out
    assert "MYTOOL_HOME=/opt/mytool\n" in out and "MYTOOL_MODE=fast\n" in out


SECRET = "sk-ant-api03-SECRETVALUE0123456789"
PLAIN_SECRET = "plain-db-password-4711"  # not key-shaped: only the environment says it is a secret


def test_secrets_never_reach_the_full_output_file(ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FOO_TOKEN", SECRET)
    monkeypatch.setenv("DB_PASSWORD", PLAIN_SECRET)
    ctx.redact = Redactor.from_env(os.environ).redact
    (ctx.workdir / "secretfile").write_text(f"//registry.npmjs.org/:_authToken={SECRET}\npw={PLAIN_SECRET}\n")
    out = shell(ctx, 'cat secretfile; seq 1 20000; echo "ERROR: auth $(cat secretfile)"; seq 1 20000')
    event = last_command(ctx)
    full = Path(event.full_output_path).read_text()
    assert full.startswith(f"//registry.npmjs.org/:_authToken={REDACTED}\npw={REDACTED}\n1\n")
    assert f"ERROR: auth //registry.npmjs.org/:_authToken={REDACTED}\n" in full
    assert len(full) == event.output_bytes
    for text in (full, event.output, out.content):
        assert SECRET not in text and PLAIN_SECRET not in text and "SECRETVALUE" not in text
    assert event.output.startswith(f"//registry.npmjs.org/:_authToken={REDACTED}\npw={REDACTED}\n")
    assert f": ERROR: auth //registry.npmjs.org/:_authToken={REDACTED}" in event.output  # the excerpt


def test_a_secret_split_across_two_reads_is_redacted(ctx: ToolContext) -> None:
    ctx.redact = Redactor([PLAIN_SECRET]).redact
    half = len(PLAIN_SECRET) // 2
    # The pause makes the two halves arrive in separate reads; the long line forces a kept file.
    command = f"printf 'pw={PLAIN_SECRET[:half]}'; sleep 0.2; printf '{PLAIN_SECRET[half:]}\\n'; seq 1 5000"
    out = shell(ctx, command)
    full = Path(last_command(ctx).full_output_path).read_text()
    assert full.startswith(f"pw={REDACTED}\n1\n")
    assert out.content.startswith(f"exit code: 0\npw={REDACTED}\n1\n")


class PrefixSandbox:
    """A stand-in SandboxPolicy: runs the command through `env`, which proves wrap() and env() are used."""

    confined = True
    bwrap = ""  # no namespaces: the command is not contained by one

    def __init__(self) -> None:
        self.also_writable: list[Path] = []

    def wrap(self, argv: list[str], *, also_writable: Sequence[Path] = ()) -> Confined:
        self.also_writable = list(also_writable)
        return Confined(["env", "WRAPPED=yes", *argv])

    def env(self) -> dict[str, str]:
        return {"TMPDIR": "/tmp/sandbox-tmp"}


def test_sandbox_wraps_the_command_and_adds_its_env(ctx: ToolContext) -> None:
    sandbox = PrefixSandbox()
    ctx.sandbox = sandbox  # type: ignore[assignment]
    out = shell(ctx, 'echo "$WRAPPED $TMPDIR"')
    assert out.content == "exit code: 0\nyes /tmp/sandbox-tmp\n"
    # the command's stdout file may be reopened by path (`> /dev/stdout`), so the sandbox must allow it
    [log] = sandbox.also_writable
    assert log.parent == ctx.session_dir / "outputs"


def test_bad_input_and_unstartable_commands_are_error_results(ctx: ToolContext) -> None:
    out = run_tool(default_tools(), "shell", {"cmd": "ls"}, ctx, "toolu_bad")
    assert out.is_error and "missing required field(s): command" in out.content
    out = shell(ctx, "true", timeout_secs=0)
    assert out.is_error and "timeout_secs must be positive" in out.content
    ctx.workdir = ctx.workdir / "missing"
    out = shell(ctx, "true", "toolu_nodir")
    assert out.is_error and out.content.startswith("could not start the command")
    assert isinstance(ctx.sink, ListSink)
    assert [e.tool_use_id for e in ctx.sink.events if isinstance(e, ToolResult)] == [
        "toolu_bad", "toolu_1", "toolu_nodir"
    ]  # fmt: skip
    assert not (ctx.session_dir / "outputs" / "toolu_nodir.log").exists()


def test_direct_tool_description_names_the_default_timeout() -> None:
    assert "Default timeout 42 s" in ShellTool(42).spec.description
