"""End-to-end `openbot run` through the real CLI: scripted model, real git repos, real processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from openbot.processes import processes_in
from tests.helpers import (
    complete,
    events,
    git,
    make_bot,
    make_repo,
    metadata,
    reply,
    run_cli,
    sessions,
    shell,
    start_run,
    wait_for,
    wrote,
)


def user_state(repo: Path) -> tuple[str, str, str, str]:
    return (
        git(repo, "rev-parse", "HEAD"),
        git(repo, "status", "--porcelain"),
        "\n".join(
            b
            for b in git(repo, "branch", "--format=%(refname) %(objectname)").splitlines()
            if not b.startswith("refs/heads/openbot/")
        ),
        git(repo, "symbolic-ref", "HEAD"),
    )


def run_events(bot: str, run_id: str) -> list[dict[str, Any]]:
    """The run's own events.jsonl: what the run did outside its sessions (docs/EVENTS.md)."""
    [path] = Path(os.environ["OPENBOT_HOME"]).glob(f"bots/{bot}/workspaces/*/runs/{run_id}/events.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]


def json_run_id(stderr: str) -> str:
    """The run id from the report's first line, `openbot: run <run_id> <status>`."""
    return stderr.split("openbot: run ", 1)[1].split()[0]


def bot_branches(repo: Path) -> list[str]:
    return git(repo, "branch", "--list", "openbot/*", "--format=%(refname:short)").split()


def test_completed_run_commits_on_its_branch_and_leaves_the_checkout_alone(repo: Path) -> None:
    (repo / "scratch.txt").write_text("user's uncommitted work\n")
    before = user_state(repo)
    make_bot(
        "writer",
        [
            reply("Looking around.", shell("ls")),
            reply(
                "", {"name": "edit", "input": {"command": "create", "path": "hello.txt", "file_text": "hi\n"}}
            ),
            reply("", shell("git add hello.txt && git commit -qm 'Add hello'")),
            reply(
                "",
                {
                    "name": "memory",
                    "input": {"action": "set", "key": "greeting", "value": "hello.txt exists"},
                },
            ),
            reply("All done.", complete("Added hello.txt", "review")),
        ],
    )
    out = run_cli("run", "writer", "--json", cwd=repo)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["status"] == "completed" and result["action"] == "review"
    assert result["resume_command"] == f"openbot run writer --resume {result['run_id']}"
    assert user_state(repo) == before
    branch = result["branch"]
    assert branch.startswith("openbot/writer-") and git(repo, "show", f"{branch}:hello.txt") == "hi"
    assert git(repo, "log", "-1", "--format=%s", branch) == "Add hello"
    assert (repo / ".git/openbot-worktrees").is_dir()  # the worktree lived there...
    assert not list((repo / ".git/openbot-worktrees").glob("writer-*"))  # ...and was removed at the end
    [session] = sessions("writer")
    assert "Work." in (session / "system_prompt.md").read_text()  # what the model was told is kept
    meta = metadata(session)
    assert meta["status"] == "completed" and meta["command_count"] == 2
    assert meta["response_summary"] == "Added hello.txt"
    types = [e["type"] for e in events(session)]
    assert types[0] == "session_started" and "command" in types and types[-1] == "session_ended"
    assert [e["seq"] for e in events(session)] == list(range(1, len(types) + 1))
    shown = run_cli("memory", "writer", "show", cwd=repo)
    assert "greeting: hello.txt exists" in shown.stdout
    listed = run_cli("history", "writer", cwd=repo)
    assert listed.returncode == 0 and "Added hello.txt" in listed.stdout


def test_iteration_limit_exits_3_and_saves_uncommitted_work_as_wip(repo: Path) -> None:
    make_bot(
        "looper",
        [reply("", shell("echo draft > draft.txt")), reply("thinking"), reply("", shell("true")), reply("x")],
        config="max_iterations = 2",
    )
    out = run_cli("run", "looper", "--json", cwd=repo)
    assert out.returncode == 3, out.stderr
    result = json.loads(out.stdout)
    assert result["status"] == "limit" and result["iterations"] == 2 and "iteration limit" in result["reason"]
    assert len(result["wip_commits"]) == 1
    assert git(repo, "show", f"{result['branch']}:draft.txt") == "draft"
    assert "openbot: WIP" in git(repo, "log", "-1", "--format=%s", result["branch"])
    assert [metadata(s)["status"] for s in sessions("looper")] == ["completed", "completed"]
    # Bug fixed: the WIP commit was printed and never logged; the run's own events.jsonl keeps it.
    # (a run_note saying the work mode comes first since 57fbfc0: the WIP commit is the one wip_commit notice)
    [wip] = [
        e for e in run_events("looper", result["run_id"]) if e["type"] == "notice" and e["kind"] != "run_note"
    ]
    assert wip["kind"] == "wip_commit" and wip["data"]["sha"] == result["wip_commits"][0]
    assert "saved as WIP commit" in out.stderr


def test_resume_continues_branch_conversation_and_numbering(repo: Path) -> None:
    bot_dir = make_bot(
        "resumer",
        [reply("", shell("echo one > one.txt")), reply("first iteration over")],
        config="max_iterations = 1",
    )
    first = json.loads(run_cli("run", "resumer", "--json", cwd=repo).stdout)
    assert first["exit_code"] == 3
    (bot_dir / "script.json").write_text(
        json.dumps(
            {
                "responses": [
                    reply(
                        "",
                        shell("cat one.txt && echo two > two.txt && git add -A && git commit -qm 'Finish'"),
                    ),
                    reply("", complete("resumed and finished")),
                ]
            }
        )
    )
    out = run_cli("run", "resumer", "--resume", first["run_id"], "--json", cwd=repo)
    assert out.returncode == 0, out.stderr
    second = json.loads(out.stdout)
    assert second["run_id"] == first["run_id"] and second["branch"] == first["branch"]
    assert git(repo, "log", "-1", "--format=%s", second["branch"]) == "Finish"
    assert [metadata(s)["session_number"] for s in sessions("resumer")] == [1, 2]
    convo = (bot_dir / "workspaces").glob(f"*/runs/{first['run_id']}/conversation.jsonl")
    texts = [line for line in next(convo).read_text().splitlines()]
    assert any("first iteration over" in t for t in texts) and any("resumed and finished" in t for t in texts)


def test_unknown_resume_id_is_exit_2(repo: Path) -> None:
    make_bot("r2", [reply("x")])
    out = run_cli("run", "r2", "--resume", "20260101T000000Z-0000", cwd=repo)
    assert out.returncode == 2 and "no run '20260101T000000Z-0000'" in out.stderr
    assert "Traceback" not in out.stderr


def test_anthropic_model_without_key_fails_before_creating_anything(repo: Path) -> None:
    bot_dir = make_bot("claude", [])
    (bot_dir / "config.md").write_text('+++\nmodel = "claude-sonnet-5-5"\n+++\nWork.\n')
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    out = subprocess.run(
        [sys.executable, "-m", "openbot", "run", "claude", "-m", "claude-sonnet-5-5"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2 and "ANTHROPIC_API_KEY" in out.stderr
    assert bot_branches(repo) == [] and sessions("claude") == []


def test_outside_a_repo_is_exit_2_with_hint(tmp_path: Path) -> None:
    make_bot("nowhere", [reply("x")])
    out = run_cli("run", "nowhere", cwd=tmp_path)
    assert out.returncode == 2 and "--skip-git-check" in out.stderr


def test_no_worktree_works_in_the_checkout(repo: Path) -> None:
    make_bot("inplace", [reply("", shell("echo more >> README.md")), reply("", complete("wrote", "merge"))])
    out = run_cli("run", "inplace", "--no-worktree", "--json", cwd=repo)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert (repo / "README.md").read_text() == "# demo\nmore\n" and bot_branches(repo) == []
    assert "without a worktree" in result["action_message"]


@pytest.mark.parametrize("action", ["merge", "discard", "review"])
def test_session_complete_actions(repo: Path, action: str) -> None:
    make_bot(
        "act",
        [
            reply("", shell("echo x > f.txt && git add f.txt && git commit -qm feature")),
            reply("", complete("feature", action)),
        ],
        'verify = ["test -f f.txt"]',  # merge applies to verified work only
    )
    main_before = git(repo, "rev-parse", "main")
    result = json.loads(run_cli("run", "act", "--json", cwd=repo).stdout)
    branch = result["branch"]
    if action == "merge":
        # main is checked out in the user's clean checkout: it is fast-forwarded, files included
        assert result["action"] == "merge" and git(repo, "rev-parse", "main") == git(
            repo, "rev-parse", branch
        )
        assert (repo / "f.txt").read_text() == "x\n" and git(repo, "status", "--porcelain") == ""
    elif action == "discard":
        assert result["action"] == "discard" and branch not in bot_branches(repo)
        assert git(repo, "rev-parse", "main") == main_before
    else:
        assert result["action"] == "review" and branch in bot_branches(repo)
        assert git(repo, "rev-parse", "main") == main_before


def test_two_bots_in_parallel_on_one_repo(repo: Path) -> None:
    for name in ("alpha", "beta"):
        make_bot(
            name,
            [
                reply("", shell(f"echo {name} > {name}.txt && git add -A && git commit -qm {name}")),
                reply("", complete(name)),
            ],
        )
    procs = [start_run("run", n, "--json", cwd=repo) for n in ("alpha", "beta")]
    results = [json.loads(p.communicate(timeout=120)[0]) for p in procs]
    assert [r["exit_code"] for r in results] == [0, 0]
    assert {r["branch"].split("-")[0] for r in results} == {"openbot/alpha", "openbot/beta"}


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_signal_during_long_command_interrupts_cleanly(repo: Path, sig: signal.Signals, code: int) -> None:
    make_bot("sleeper", [reply("", shell("echo wip > wip.txt; sleep 60")), reply("never")])
    proc = start_run("run", "sleeper", "--json", cwd=repo)
    wait_for(lambda: wrote(repo, "sleeper", "wip.txt"))
    t0 = time.monotonic()
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=30)
    assert time.monotonic() - t0 < 10
    assert proc.returncode == code, stderr
    result = json.loads(stdout)
    assert result["status"] == "interrupted" and "--resume" in stderr
    assert git(repo, "show", f"{result['branch']}:wip.txt") == "wip"
    # Bug fixed: the session was recorded as "interrupted by SIGINT" whatever the signal was.
    session = sessions("sleeper")[-1]
    assert metadata(session)["status"] == "interrupted"
    assert metadata(session)["error"] == result["reason"] == f"interrupted by {sig.name}"
    assert events(session)[-1] == {**events(session)[-1], "type": "session_ended", "status": "interrupted"}
    assert not list((repo / ".git" / "openbot-worktrees").glob("sleeper-*"))


def test_sigkilled_run_is_swept_by_the_next_run(repo: Path) -> None:
    make_bot("victim", [reply("", shell("echo precious > precious.txt; sleep 60"))])
    proc = start_run("run", "victim", cwd=repo, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(lambda: wrote(repo, "victim", "precious.txt"))
    proc.kill()
    proc.wait()
    assert bot_branches(repo) == []  # the run's branch is in its own repository until brought home
    leftover = [p for p in processes_in(repo / ".git" / "openbot-worktrees") if _is_sleep(p)]
    # The sandbox (bwrap --die-with-parent) takes the command down with openbot; the sweep below still runs.
    wait_for(lambda: not [p for p in processes_in(repo / ".git" / "openbot-worktrees") if _is_sleep(p)], 10)
    make_bot("next", [reply("", complete("nothing"))])
    out = run_cli("run", "next", cwd=repo)
    assert out.returncode == 0, out.stderr
    [branch] = bot_branches(repo)
    assert git(repo, "show", f"{branch}:precious.txt") == "precious"
    assert not list((repo / ".git" / "openbot-worktrees").glob("victim-*"))
    assert "victim" not in git(repo, "worktree", "list")
    wait_for(lambda: not any(Path(f"/proc/{p}").exists() and _is_sleep(p) for p in leftover), timeout=5)
    # the dead run's records say what happened instead of "running" forever
    [session] = sessions("victim")
    assert metadata(session)["status"] == "failed" and "died" in metadata(session)["error"]
    # what it did, read back from its events: not "0s, 0 tokens" and the task prompt as its summary
    dead = metadata(session)
    assert dead["response_summary"] == "the openbot process died after 0 commands, while running: " + (
        "echo precious > precious.txt; sleep 60"
    )
    assert sum(dead["tokens"].values()) > 0 and dead["duration_secs"] > 0
    listed = run_cli("history", "victim", cwd=repo).stdout
    assert "the openbot process died after 0 commands" in listed
    record = json.loads(
        next(Path(os.environ["OPENBOT_HOME"]).glob("bots/victim/workspaces/*/runs/*/run.json")).read_text()
    )
    assert record["status"] == "failed" and record["wip_commits"] == [git(repo, "rev-parse", branch)]
    # the next run logged what it did on the dead run's behalf, before it had a session of its own
    kinds = {e["kind"]: e["data"] for e in run_events("next", json_run_id(out.stderr))}
    assert kinds["worktree_swept"]["branch"] == branch
    assert kinds["worktree_swept"]["wip_commit"] == git(repo, "rev-parse", branch)


def test_subdirectory_and_linked_worktree_resolve_to_the_same_repo(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"src/a.py": "x = 1\n"})
    git(repo, "worktree", "add", "-q", "-b", "feature", str(tmp_path / "wt"))
    make_bot("sub", [reply("", complete("ok"))])
    for cwd in (repo / "src", tmp_path / "wt"):
        out = run_cli("run", "sub", "--json", cwd=cwd)
        assert out.returncode == 0, out.stderr
    projects = {p.name for p in (Path(os.environ["OPENBOT_HOME"]) / "bots/sub/workspaces").iterdir()}
    assert len(projects) == 1


def test_everything_openbot_writes_under_its_home_is_user_only(repo: Path) -> None:
    make_bot(
        "private",
        [
            reply(
                "",
                shell("seq 1 100000"),
                {"name": "memory", "input": {"action": "set", "key": "k", "value": "v"}},
            ),
            reply("", complete()),
        ],
    )
    assert run_cli("run", "private", cwd=repo).returncode == 0
    home = Path(os.environ["OPENBOT_HOME"])
    # bots/ only: trash/ is being emptied by a detached rm (nice 19) while this walks
    written = [p for p in (home / "bots").rglob("*") if "workspaces" in p.parts]
    assert any(p.name == "memory.json" for p in written) and any(p.suffix == ".log" for p in written)
    for p in written:
        mode = p.stat().st_mode & 0o777
        assert mode == (0o700 if p.is_dir() else 0o600), f"{p} is {oct(mode)}"


def test_headless_run_with_closed_stdin_never_waits(repo: Path) -> None:
    script = [reply("", shell("true")), reply("one")] * 2
    make_bot("headless", script, config="max_iterations = 2\nsleep_secs = 0.2")
    # input="" gives the run a stdin pipe that is closed at once (EOF), as under cron
    proc = subprocess.run(
        [sys.executable, "-m", "openbot", "run", "headless"],
        cwd=repo,
        text=True,
        input="",
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 3, proc.stderr
    assert [metadata(s)["status"] for s in sessions("headless")] == ["completed", "completed"]


def test_wall_time_budget_stops_the_run_with_exit_3(repo: Path) -> None:
    make_bot("slow", [reply("", shell("sleep 1")), reply("", shell("true")), reply("", complete())])
    out = run_cli("run", "slow", "--max-minutes", "0.01", "--json", cwd=repo)
    assert out.returncode == 3, out.stderr
    result = json.loads(out.stdout)
    assert "time limit reached" in result["reason"] and result["budget"]["max_minutes"] == 0.01
    assert metadata(sessions("slow")[0])["status"] == "limit"


def test_the_branch_is_named_after_the_run(repo: Path) -> None:
    make_bot("named", [reply("", complete())])
    result = json.loads(run_cli("run", "named", "--json", cwd=repo).stdout)
    assert result["branch"] == f"openbot/named-{result['run_id']}"


def test_a_completed_run_without_commits_leaves_no_branch_behind(repo: Path) -> None:
    make_bot("idle", [reply("", shell("git status")), reply("", complete("nothing to do", "review"))])
    result = json.loads(run_cli("run", "idle", "--json", cwd=repo).stdout)
    assert result["exit_code"] == 0 and result["action"] == "discard"
    assert "no new commits" in result["action_message"] and bot_branches(repo) == []


def _is_sleep(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"sleep") and not _zombie(pid)
    except OSError:
        return False


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].startswith("Z")
    except OSError:
        return True


def test_a_long_command_is_cut_at_the_wall_time_budget(repo: Path) -> None:
    make_bot("overrun", [reply("", shell("sleep 60")), reply("", complete())])
    started = time.monotonic()
    out = run_cli("run", "overrun", "--max-minutes", "0.05", "--json", cwd=repo)
    assert time.monotonic() - started < 30  # not the 60 s the command asked for
    assert out.returncode == 3 and "time limit" in json.loads(out.stdout)["reason"]
    [command] = [e for e in events(sessions("overrun")[0]) if e["type"] == "command"]
    assert command["timed_out"] and command["exit_code"] is None


def test_under_ci_the_run_writes_a_step_summary_and_plain_lines(repo: Path, tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    make_bot("nightly", [reply("Working.", shell("echo hi")), reply("", complete("nightly work done"))])
    out = run_cli("run", "nightly", cwd=repo, env={"CI": "true", "GITHUB_STEP_SUMMARY": str(summary)})
    assert out.returncode == 0, out.stderr
    text = summary.read_text()
    assert "nightly work done" in text and "|" in text and "completed" in text
    assert "\x1b[" not in out.stderr and "  │ Working." in out.stderr  # plain log lines, no terminal codes


def test_bot_option_and_with_changes(repo: Path) -> None:
    (repo / "README.md").write_text("# demo\nuser's edit\n")
    (repo / "notes.txt").write_text("untracked\n")
    before = git(repo, "status", "--porcelain")
    make_bot(
        "carry",
        [reply("", shell("git add -A && git commit -qm 'with the user changes'")), reply("", complete())],
    )
    out = run_cli("run", "-b", "carry", "--with-changes", "--json", cwd=repo)
    assert out.returncode == 0, out.stderr
    branch = json.loads(out.stdout)["branch"]
    assert git(repo, "show", f"{branch}:notes.txt") == "untracked"
    assert git(repo, "show", f"{branch}:README.md") == "# demo\nuser's edit"
    assert git(repo, "status", "--porcelain") == before  # the user's changes stay where they were, too
    assert (repo / "notes.txt").read_text() == "untracked\n"


def test_a_second_ctrl_c_exits_at_once_and_the_next_run_recovers_the_work(repo: Path) -> None:
    make_bot("hasty", [reply("", shell("echo draft > draft.txt; trap '' INT TERM; sleep 60"))])
    proc = start_run("run", "hasty", cwd=repo)
    wait_for(lambda: wrote(repo, "hasty", "draft.txt"))
    started = time.monotonic()
    proc.send_signal(signal.SIGINT)
    time.sleep(0.2)
    proc.send_signal(signal.SIGINT)  # the command ignores signals: without this we would wait ~2 s more
    proc.communicate(timeout=30)
    # In the sandbox the first ctrl-c already ends the command (its trap cannot outlive bwrap), so the
    # second may land after the run restored the default handler: killed by SIGINT, its work saved.
    assert proc.returncode in (130, -signal.SIGINT) and time.monotonic() - started < 5
    make_bot("after", [reply("", complete())])
    assert run_cli("run", "after", cwd=repo).returncode == 0
    [branch] = bot_branches(repo)
    assert git(repo, "show", f"{branch}:draft.txt") == "draft"


def test_merge_is_refused_when_the_bot_left_uncommitted_work(repo: Path) -> None:
    main_before = git(repo, "rev-parse", "main")
    make_bot(
        "messy",
        [
            reply(
                "",
                shell(
                    "echo feature > f.txt && git add f.txt && git commit -qm feature && "
                    "echo scratch > scratch.txt"
                ),
            ),
            reply("", complete("done", "merge")),
        ],
    )
    result = json.loads(run_cli("run", "messy", "--json", cwd=repo).stdout)
    assert result["action"] == "review" and "not merged" in result["action_message"]
    assert git(repo, "rev-parse", "main") == main_before and not (repo / "scratch.txt").exists()
    assert git(repo, "show", f"{result['branch']}:scratch.txt") == "scratch"  # kept on the bot's branch


def test_an_unfinished_run_without_commits_drops_its_branch_and_resume_recreates_it(repo: Path) -> None:
    bot_dir = make_bot("ponder", [reply("", shell("true")), reply("thinking")], config="max_iterations = 1")
    first = json.loads(run_cli("run", "ponder", "--json", cwd=repo).stdout)
    assert first["exit_code"] == 3 and bot_branches(repo) == [] and first["resume_command"]
    (bot_dir / "script.json").write_text(
        json.dumps(
            {
                "responses": [
                    reply("", shell("echo x > x.txt && git add x.txt && git commit -qm x")),
                    reply("", complete()),
                ]
            }
        )
    )
    second = json.loads(run_cli("run", "ponder", "--resume", first["run_id"], "--json", cwd=repo).stdout)
    assert second["exit_code"] == 0 and second["branch"] == first["branch"]
    assert git(repo, "log", "-1", "--format=%s", second["branch"]) == "x"


def test_a_script_path_that_is_a_directory_is_a_one_line_error(repo: Path, tmp_path: Path) -> None:
    make_bot("dirscript", [reply("", complete())])
    out = run_cli("run", "dirscript", "--model", f"scripted:{tmp_path}", cwd=repo)
    assert out.returncode == 2 and "cannot read the script" in out.stderr and "Traceback" not in out.stderr
