"""A sandbox started ahead of its command (openbot.agent.tools.shell_spare): confined before it knows its
command, it runs what it is sent — in the directory and with the environment sent — and nothing else."""

from __future__ import annotations

import os
import subprocess
import sys

from openbot.agent.tools import shell_spare
from openbot.sandbox import SandboxPolicy
from tests.sandbox.conftest import Run, denied, needs_landlock


def output(spare: shell_spare.Spare) -> tuple[int, str]:
    assert spare.proc.stdout is not None
    text = spare.proc.stdout.read().decode()
    spare.proc.stdout.close()
    return spare.proc.wait(), text


def env_for(run: Run, policy: SandboxPolicy) -> dict[str, str]:
    return {"PATH": os.environ["PATH"], "HOME": str(run.home), **policy.env()}


@needs_landlock
def test_a_spare_runs_the_command_it_is_sent_confined(run: Run) -> None:
    policy = run.policy("workspace-write")
    spare = shell_spare.start(policy, run.worktree, {"PATH": os.environ["PATH"], "SPAWNED": "yes"}, True)
    sent_env = {**env_for(run, policy), "SENT": "the command's own"}
    command = f'pwd; echo "${{SENT}}/${{SPAWNED:-unset}}"; touch made {run.home}/escaped'
    shell_spare.send(spare, run.worktree, ["bash", "-c", command], sent_env)
    code, text = output(spare)
    lines = text.splitlines()
    assert lines[:2] == [str(run.worktree), "the command's own/unset"]  # the cwd and env sent, no other
    assert code == 1 and denied(subprocess.CompletedProcess([], code, text, text))  # the wall held
    assert (run.worktree / "made").exists() and not (run.home / "escaped").exists()


@needs_landlock
def test_a_spare_sent_nothing_runs_nothing(run: Run) -> None:
    policy = run.policy("workspace-write")
    spare = shell_spare.start(policy, run.worktree, env_for(run, policy), True)
    os.close(spare.command_fd)  # openbot went away, or discarded it
    spare.command_fd = -1
    code, text = output(spare)
    assert code == 125 and text == ""


@needs_landlock
def test_the_launcher_takes_argv_or_a_command_fd_never_both(run: Run) -> None:
    wrapped = run.policy("workspace-write").wrap(["true"])
    start = wrapped.index(sys.executable)
    launcher = wrapped[start : start + 4]
    marker = run.home / "ran"
    both = subprocess.run([*launcher, "--command-fd=0", "--", "touch", str(marker)], capture_output=True)
    assert both.returncode == 125 and not marker.exists()
    neither = subprocess.run([*launcher, "--"], capture_output=True)
    assert neither.returncode == 125


def test_a_discarded_spare_is_stopped_and_reaped() -> None:
    read_end, write_end = os.pipe()
    proc = subprocess.Popen(["sleep", "60"], stdout=subprocess.PIPE, process_group=0)
    spare = shell_spare.Spare(proc, write_end, ())
    shell_spare.discard(spare)
    assert proc.returncode is not None and spare.command_fd == -1
    assert os.read(read_end, 1) == b""  # its end of the command pipe was closed: a launcher would exit
    os.close(read_end)


@needs_landlock
def test_the_shell_tool_keeps_one_spare_and_stops_it_when_closed(run: Run) -> None:
    from openbot.agent.tools.base import ToolContext
    from openbot.agent.tools.shell import ShellTool
    from openbot.events import ListSink

    policy = run.policy("workspace-write")
    ctx = ToolContext(
        workdir=run.worktree,
        session_dir=run.tmp / "session",
        env={"PATH": os.environ["PATH"]},
        sink=ListSink(),
        sandbox=policy,
    )
    tool = ShellTool()
    first = tool.run({"command": "echo one"}, ctx, "t1")
    spare = tool.spares.spare
    assert first.content == "exit code: 0\none\n" and spare is not None and spare.proc.poll() is None
    second = tool.run({"command": f"touch {run.home}/escaped; echo two"}, ctx, "t2")
    assert "cannot touch" in second.content and not (run.home / "escaped").exists()
    assert spare.proc.returncode is not None  # the spare ran the second command, confined
    waiting = tool.spares.spare
    assert waiting is not None and waiting is not spare
    tool.close()
    assert waiting.proc.returncode is not None and tool.spares.spare is None
