"""The end of a run: its repository is moved aside at once and deleted by an `rm` of its own.

Counted, not timed: a logging `rm` first on PATH shows the deletion was handed over (once, and only the
run's own trash), the run's directories are gone from their places when openbot exits, the work is
home, and the trash disappears without openbot (waited for as an event, not a clock).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from openbot import paths
from tests.helpers import (
    complete,
    events,
    git,
    logged_program,
    make_bot,
    reply,
    run_cli,
    sessions,
    shell,
    wait_for,
)


@pytest.fixture
def logged_rm(tmp_path: Path) -> tuple[dict[str, str], Path]:
    log = tmp_path / "rm.log"
    return logged_program("rm", tmp_path / "bin", log), log


def test_the_run_repository_is_deleted_by_a_process_of_its_own(
    repo: Path, logged_rm: tuple[dict[str, str], Path]
) -> None:
    env, log = logged_rm
    work = "echo hi > note.txt && git add note.txt && git commit -qm note"
    make_bot("tidy", [reply("", shell(work)), reply("", complete("noted", action="review"))])

    out = run_cli("run", "tidy", cwd=repo, env=env)

    assert out.returncode == 0, out.stderr
    runs = repo / ".git" / "openbot-worktrees"
    # moved aside, and out of the user's repository: nothing is being deleted there once openbot exited
    assert sorted(p.name for p in runs.iterdir() if p.name != ".lock") == []
    branch = git(repo, "branch", "--list", "openbot/tidy-*", "--format=%(refname:short)")
    assert git(repo, "show", f"{branch}:note.txt") == "hi"  # the work is home
    trash = paths.home() / "trash"
    wait_for(lambda: log.exists() and not list(trash.iterdir()))
    [line] = log.read_text().splitlines()  # one rm, for the run's own trash only
    args = line.split()
    assert args[:2] == ["-rf", "--"] and len(args) >= 4
    assert all(Path(a).parent == trash and Path(a).name.startswith(".trash-tidy-") for a in args[2:])


@pytest.fixture
def logged_git(tmp_path: Path) -> tuple[dict[str, str], Path]:
    log = tmp_path / "git.log"
    return logged_program("git", tmp_path / "gitbin", log), log


def _ref_updates(log: Path) -> list[str]:
    calls = log.read_text().splitlines() if log.exists() else []
    return [c for c in calls if " update-ref " in f" {c} " or " rev-list " in f" {c} "]


@pytest.mark.parametrize("action", ["discard", "review", "merge"])
def test_a_run_that_made_nothing_makes_no_branch_to_delete(
    repo: Path, logged_git: tuple[dict[str, str], Path], action: str
) -> None:
    env, log = logged_git
    make_bot("idle", [reply("", complete("nothing to do", action=action))])

    out = run_cli("run", "idle", "--json", cwd=repo, env=env)

    assert out.returncode == 0, out.stderr
    # Before, the end made openbot/<name> at the base (update-ref) and deleted it again (update-ref -d,
    # after a rev-list for review and merge): two or three git processes for nothing.
    assert _ref_updates(log) == []
    assert git(repo, "branch", "--list", "openbot/*") == ""
    result = json.loads(out.stdout)
    assert result["status"] == "completed" and result["action"] == "discard"


def test_a_run_with_a_commit_still_brings_its_branch_home(
    repo: Path, logged_git: tuple[dict[str, str], Path]
) -> None:
    env, log = logged_git
    work = "echo hi > note.txt && git add note.txt && git commit -qm note"
    make_bot("busy", [reply("", shell(work)), reply("", complete("noted", action="review"))])

    out = run_cli("run", "busy", cwd=repo, env=env)

    assert out.returncode == 0, out.stderr
    assert len([c for c in _ref_updates(log) if "update-ref" in c]) == 1  # made (a discard makes none)
    branch = git(repo, "branch", "--list", "openbot/*", "--format=%(refname:short)")
    assert git(repo, "show", f"{branch}:note.txt") == "hi"


def test_the_end_s_pygit2_import_starts_once_the_first_reply_is_in() -> None:
    """pygit2 (the WIP commit) is imported while the model works: after its first reply, never on the
    way to the first request, and once."""
    from openbot.agent.models.base import ModelRequest
    from openbot.agent.models.scripted import ScriptedModel
    from openbot.events import ListSink
    from openbot.run.signals import GuardedModel, SignalGuard
    from openbot.stops import Cancel

    seen: list[str] = []
    inner = ScriptedModel([{"text": "one"}, {"text": "two"}])
    complete = inner.complete

    def answering(request: ModelRequest, sink: ListSink) -> object:
        seen.append("reply")
        return complete(request, sink)

    inner.complete = answering  # type: ignore[method-assign]
    model = GuardedModel(inner, SignalGuard(Cancel()), lambda: seen.append("warm"))
    request = ModelRequest("sys", [], [{"role": "user", "content": "go"}])
    model.complete(request, ListSink())
    model.complete(request, ListSink())
    assert seen == ["reply", "warm", "reply"]


STATUS_COUNTER = """\
import atexit, subprocess, sys
out = sys.argv.pop(1)
started = []
real_run = subprocess.run
def run(argv, *args, **kwargs):
    if "status" in argv and "core.fsmonitor=false" in argv:  # the verification's, not the start's
        started.append(argv)
    return real_run(argv, *args, **kwargs)
subprocess.run = run
def note(out=out, started=started, open=open):
    with open(out, "w") as f:
        f.write(repr(started))
atexit.register(note)
sys.argv[0] = "openbot"
from openbot.cli.app import main
sys.exit(main())
"""


def test_verification_asks_git_status_in_the_sandbox_already_waiting(tmp_path: Path, repo: Path) -> None:
    """The agent's checkout's `git status` (what verification does not count) runs in the shell tool's
    sandbox started after the agent's last command, not in a new one: no process is started for it."""
    work = "echo x > scratch.txt && echo y > kept.txt && git add kept.txt && git commit -qm kept"
    make_bot("checked", [reply("", shell(work)), reply("", complete("kept", action="review"))],
             config='verify = ["true"]\n')  # fmt: skip
    wrapper, count = tmp_path / "openbot-wrapper.py", tmp_path / "count.txt"
    wrapper.write_text(STATUS_COUNTER)
    out = subprocess.run(
        [sys.executable, str(wrapper), str(count), "run", "checked"],
        cwd=repo, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )  # fmt: skip

    assert out.returncode == 0, out.stderr
    assert count.read_text() == "[]"  # before: one sandboxed `git status` started of its own
    [session] = sessions("checked")
    [check] = [e for e in events(session) if e["type"] == "verification"]
    assert check["passed"] and check["uncommitted"] == ["?? scratch.txt"]
