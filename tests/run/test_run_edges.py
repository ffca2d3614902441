"""How runs end in awkward ways: dead processes, resumes that cannot be, broken pipes, bad state."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

from openbot import paths
from openbot.state.conversation import Conversation
from tests.helpers import (
    complete,
    events,
    git,
    make_bot,
    metadata,
    reply,
    run_cli,
    sessions,
    shell,
    start_run,
    tool_started,
    wait_for,
    wrote,
)


def _conversation(bot: str) -> list[dict]:
    path = next(paths.bot_home(bot).glob("workspaces/*/runs/*/conversation.jsonl"))
    return Conversation.load(path).messages


def test_resume_after_sigkill_mid_tool_gives_the_killed_call_a_result(repo: Path) -> None:
    bot_dir = make_bot("crash", [reply("", shell("echo half > half.txt; sleep 60", "toolu_killed"))])
    proc = start_run("run", "crash", "--json", cwd=repo, stderr=subprocess.DEVNULL)
    wait_for(lambda: wrote(repo, "crash", "half.txt"))
    proc.kill()
    proc.communicate()
    run_id = next(paths.bot_home("crash").glob("workspaces/*/runs/*")).name
    (bot_dir / "script.json").write_text(json.dumps({"responses": [reply("", complete("recovered"))]}))
    out = run_cli("run", "crash", "--resume", run_id, "--json", cwd=repo)
    assert out.returncode == 0, out.stderr
    messages = _conversation("crash")
    killed = [b for m in messages for b in m["content"] if b.get("tool_use_id") == "toolu_killed"]
    assert len(killed) == 1 and killed[0]["is_error"]
    for prev, nxt in zip(messages, messages[1:], strict=False):
        assert prev["role"] != nxt["role"]  # roles alternate, as the API requires
    assert git(repo, "show", f"{json.loads(out.stdout)['branch']}:half.txt") == "half"


def test_resume_of_a_live_run_is_refused(repo: Path) -> None:
    make_bot("live", [reply("", shell("sleep 60"))])
    proc = start_run("run", "live", cwd=repo, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: tool_started("live"))
        run_dir = next(paths.bot_home("live").glob("workspaces/*/runs/*"))
        before = (run_dir / "run.json").read_text()
        out = run_cli("run", "live", "--resume", run_dir.name, cwd=repo)
        assert out.returncode == 2 and "still running" in out.stderr
        assert (run_dir / "run.json").read_text() == before
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)


def test_resume_after_discard_is_refused_and_keeps_the_record(repo: Path) -> None:
    make_bot("gone", [reply("", complete("nothing worth keeping", "discard"))])
    result = json.loads(run_cli("run", "gone", "--json", cwd=repo).stdout)
    record = next(paths.bot_home("gone").glob("workspaces/*/runs/*/run.json"))
    before = record.read_text()
    out = run_cli("run", "gone", "--resume", result["run_id"], cwd=repo)
    assert out.returncode == 2 and "discard" in out.stderr and "Traceback" not in out.stderr
    assert record.read_text() == before


def test_an_empty_repository_is_refused_before_anything_is_created(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    git(tmp_path, "init", "-q", "-b", "main", str(empty))
    make_bot("first", [reply("", complete())])
    out = run_cli("run", "first", cwd=empty)
    assert out.returncode == 2 and "no commits" in out.stderr
    assert not (empty / ".git" / "openbot-worktrees").exists() and sessions("first") == []


def test_a_damaged_memory_file_is_refused_before_anything_is_created(repo: Path) -> None:
    make_bot("forgetful", [reply("", complete())])
    assert run_cli("memory", "forgetful", "set", "k", "v", cwd=repo).returncode == 0
    memory = next(paths.bot_home("forgetful").glob("workspaces/*/memory.json"))
    memory.write_text("{not json")
    out = run_cli("run", "forgetful", cwd=repo)
    assert out.returncode == 2 and "memory.json" in out.stderr
    assert memory.read_text() == "{not json" and "openbot/" not in git(repo, "branch")


def test_resumed_runs_add_up_their_tokens(repo: Path) -> None:
    usage = {"input": 400, "output": 100}
    bot_dir = make_bot("thrifty", [{"text": "one", "usage": usage}], config="max_iterations = 1")
    first = json.loads(run_cli("run", "thrifty", "--json", cwd=repo).stdout)
    assert sum(first["tokens"].values()) == 500
    (bot_dir / "script.json").write_text(json.dumps({"responses": [{"text": "two", "usage": usage}]}))
    second = json.loads(run_cli("run", "thrifty", "--resume", first["run_id"], "--json", cwd=repo).stdout)
    assert sum(second["tokens"].values()) == 1000


def test_a_run_whose_stderr_reader_died_still_saves_everything(repo: Path) -> None:
    make_bot("piped", [reply("", shell("echo wip > wip.txt; sleep 60"))])
    proc = start_run("run", "piped", "--json", cwd=repo)
    wait_for(lambda: wrote(repo, "piped", "wip.txt"))
    assert proc.stderr is not None
    proc.stderr.close()  # like `openbot run … 2>&1 | tee log` with tee killed by the same ctrl-c
    proc.send_signal(signal.SIGINT)
    stdout, _ = proc.communicate(timeout=30)
    assert proc.returncode == 130
    result = json.loads(stdout)
    assert result["status"] == "interrupted" and len(result["wip_commits"]) == 1
    record = json.loads(next(paths.bot_home("piped").glob("workspaces/*/runs/*/run.json")).read_text())
    assert record["status"] == "interrupted" and record["exit_code"] == 130
    assert metadata(sessions("piped")[0])["status"] == "interrupted"
    assert os.environ["OPENBOT_HOME"]


def test_a_command_stops_at_its_timeout_even_when_openbot_is_killed(repo: Path) -> None:
    marker = f"sleep 61.{os.getpid()}"  # a command line no other test uses
    call = {"name": "shell", "input": {"command": f"{marker}", "timeout_secs": 2}}
    make_bot("deadman", [reply("", call)])
    proc = start_run("run", "deadman", cwd=repo, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def running() -> bool:
        for stat in Path("/proc").glob("[0-9]*/cmdline"):
            try:
                if stat.read_bytes().replace(b"\0", b" ").strip() == marker.encode():
                    state = (stat.parent / "stat").read_text().split(") ", 1)[1][0]
                    if state != "Z":
                        return True
            except OSError:
                continue
        return False

    wait_for(running)  # the command itself, not a guess at how long it takes to start
    proc.kill()  # openbot cannot stop the command now: its own `timeout` wrapper must
    proc.wait()
    # Sandboxed, bwrap --die-with-parent stops it at once; unconfined, the `timeout` wrapper within ~7 s.
    wait_for(lambda: not running(), timeout=20)


def test_a_killed_run_without_worktree_is_marked_by_the_next_run(repo: Path) -> None:
    make_bot("inplace", [reply("", shell("sleep 60"))])
    proc = start_run(
        "run", "inplace", "--no-worktree", cwd=repo, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    wait_for(lambda: tool_started("inplace"))
    proc.kill()
    proc.wait()
    make_bot("inplace", [reply("", complete())])
    out = run_cli("run", "inplace", "--no-worktree", cwd=repo)
    assert out.returncode == 0 and "had died" in out.stderr
    first = sessions("inplace")[0]
    assert metadata(first)["status"] == "failed" and "died" in metadata(first)["error"]


def test_a_scripted_refusal_ends_the_run_refused_with_its_details(repo: Path) -> None:
    """The scripted backend replays a refusal as the API sends it, so a bot's refusal handling (exit 4,
    the category and explanation shown and recorded) can be dry-run offline."""
    details = {"type": "refusal", "category": "cyber", "explanation": "Declined: exploit development."}
    make_bot(
        "shy",
        [
            {
                "text": "I can't help with that.",
                "tool_calls": [{"name": "shell", "input": {"command": "touch ran.txt"}}],
                "stop_reason": "refusal",
                "stop_details": details,
            }
        ],
    )
    out = run_cli("run", "shy", "--json", cwd=repo)
    assert out.returncode == 4, out.stderr
    result = json.loads(out.stdout)
    assert result["status"] == "refused"
    assert "cyber" in out.stderr and "Declined: exploit development." in out.stderr
    [session] = sessions("shy")
    assert not [e for e in events(session) if e["type"] in ("command", "command_started")]  # nothing ran
