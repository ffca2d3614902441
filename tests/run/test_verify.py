"""openbot verifies the bot's work itself at session_complete, through the real CLI with scripted bots: a
failed check goes back to the bot, which fixes it and is verified (exit 0, a note on the branch); a bot
that never fixes it ends `unverified` (exit 5) with nothing merged and nothing lost; and the bot cannot
fake a pass."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from openbot import paths
from tests.helpers import complete, git, make_bot, make_repo, reply, run_cli, sessions, shell

FILES = {
    "calc.py": "def answer():\n    return 41\n",
    "test_calc.py": "from calc import answer\n\nassert answer() == 42, 'answer() is not 42'\nprint('ok')\n",
}
VERIFY = 'verify = ["python3 test_calc.py"]\n'
GONE = """import sys
pid = open("{pidfile}").read().strip()
try:
    state = open(f"/proc/{{pid}}/stat").read().rsplit(")", 1)[1].split()[0]
except OSError:
    state = "gone"
sys.exit(state not in ("gone", "Z"))
"""
FIX = shell("sed -i s/41/42/ calc.py && git commit -qam 'fix answer'")


def project(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", FILES)


def verifications(bot: str) -> list[dict[str, Any]]:
    found = []
    for s in sessions(bot):
        found += [json.loads(x) for x in (s / "events.jsonl").read_text().splitlines()]
    return [e for e in found if e["type"] == "verification"]


def run_record(bot: str) -> dict[str, Any]:
    (path,) = paths.bot_home(bot).glob("workspaces/*/runs/*/run.json")
    return dict(json.loads(path.read_text()))


def test_a_bot_told_its_test_fails_fixes_it_and_is_verified_with_the_record_on_its_branch(
    tmp_path: Path,
) -> None:
    repo = project(tmp_path)
    make_bot(
        "fixer",
        [reply("", complete("done", "merge")), reply("", FIX), reply("", complete("fixed", "merge"))],
        VERIFY,
    )
    out = run_cli("run", "fixer", "--json", cwd=repo)
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert summary["status"] == "completed" and summary["verified"] is True
    first, second = verifications("fixer")
    assert not first["passed"] and "`python3 test_calc.py` exited with 1" in first["reason"]
    assert "answer() is not 42" in first["checks"][0]["output"]
    assert second["passed"] and second["sha"] == summary["verified_sha"]
    # The bot was told in its next turn what failed, with the output's tail.
    conversation = next(paths.bot_home("fixer").glob("workspaces/*/runs/*/conversation.jsonl")).read_text()
    assert "session_complete was not accepted" in conversation and "answer() is not 42" in conversation
    # Verified work is merged; the note on the commit says who checked what.
    tip = git(repo, "rev-parse", "main")
    assert tip == summary["verified_sha"] and "return 42" in (repo / "calc.py").read_text()
    note = git(repo, "notes", "--ref=openbot", "show", tip)
    assert (
        note.startswith(f"Verified-by: openbot; 1 check(s) passed at {tip}")
        and "python3 test_calc.py" in note
    )


def test_a_bot_that_never_fixes_it_ends_unverified_exit_5_nothing_merged_nothing_lost(tmp_path: Path) -> None:
    repo = project(tmp_path)
    work = shell("echo notes > NOTES.md && git add NOTES.md && git commit -qm notes")
    script = [reply("", work), reply("", complete("done", "merge")), reply("", complete("done!", "merge"))]
    make_bot("stubborn", script, VERIFY + "verify_attempts = 2\n")
    out = run_cli("run", "stubborn", "--json", cwd=repo)
    assert out.returncode == 5, out.stderr
    summary = json.loads(out.stdout)
    assert summary["status"] == "unverified" and summary["verified"] is False
    assert "not verified after 2 attempt(s)" in summary["reason"]
    assert summary["summary"].startswith(
        "not verified after 2 attempt(s)"
    )  # said once (was "…: not verified …")
    assert "1 commit on" in summary["summary"] and "(1 file," in summary["summary"]
    assert [v["passed"] for v in verifications("stubborn")] == [False, False]
    assert summary["action"] == "review" and "not merged" in summary["action_message"]
    assert git(repo, "log", "-1", "--format=%s", "main") == "initial"  # no merge
    assert git(repo, "show", f"{summary['branch']}:NOTES.md") == "notes"  # the bot's commit is kept
    assert run_record("stubborn")["status"] == "unverified"


def test_uncommitted_fixes_and_a_doctored_test_runner_do_not_count(tmp_path: Path) -> None:
    repo = project(tmp_path)
    cheat = shell(
        "sed -i s/41/42/ calc.py && echo 'print(\"ok\")' > test_calc.py"
        " && printf 'import sys\\nsys.exit(0)\\n' > sitecustomize.py"
    )
    make_bot(
        "cheat", [reply("", cheat), reply("", complete("done", "merge"))], VERIFY + "verify_attempts = 1\n"
    )
    out = run_cli("run", "cheat", "--json", cwd=repo)
    assert out.returncode == 5, out.stderr
    (check,) = verifications("cheat")
    assert not check["passed"] and "answer() is not 42" in check["checks"][0]["output"]
    assert {line[3:] for line in check["uncommitted"]} == {"calc.py", "test_calc.py", "sitecustomize.py"}
    # Nothing lost: what it left uncommitted is the WIP commit on its branch.
    summary = json.loads(out.stdout)
    (wip,) = summary["wip_commits"]
    assert git(repo, "show", f"{wip}:calc.py").endswith("return 42")


def test_a_background_process_of_the_bot_is_stopped_before_its_work_is_checked(tmp_path: Path) -> None:
    repo = project(tmp_path)
    pidfile = tmp_path / "daemon.pid"
    daemon = shell(
        f"setsid sh -c 'echo $$ > {pidfile}.new && mv {pidfile}.new {pidfile}; exec sleep 600' >/dev/null"
        f" 2>&1 & until [ -s {pidfile} ]; do sleep 0.05; done; cat {pidfile}"  # waits for it, not a clock
    )
    # Unconfined, nothing else would stop it; the check passes only when the daemon is gone.
    gone = tmp_path / "gone.py"
    gone.write_text(GONE.format(pidfile=pidfile))
    alive = f"python3 {gone}"
    config = f'sandbox = "danger-full-access"\nverify = [{json.dumps(alive)}, "python3 test_calc.py"]\n'
    make_bot("daemon", [reply("", daemon), reply("", FIX), reply("", complete("done", "merge"))], config)
    out = run_cli("run", "daemon", "--json", cwd=repo)
    assert out.returncode == 0, out.stderr
    (check,) = verifications("daemon")
    assert check["passed"] and check["stopped_processes"] >= 1


def test_a_verify_edited_in_the_committed_config_during_the_run_is_not_what_runs(tmp_path: Path) -> None:
    repo = project(tmp_path)
    bot_dir = repo / ".openbot" / "bots" / "rb"
    bot_dir.mkdir(parents=True)
    config = ".openbot/bots/rb/config.md"
    edit = shell(f"sed -i 's/^verify = .*/verify = [\"true\"]/' {config} && git commit -qam 'no checks'")
    (bot_dir / "script.json").write_text(json.dumps({"responses": [reply("", edit), reply("", complete())]}))
    (bot_dir / "config.md").write_text(
        f'+++\nmodel = "scripted:script.json"\nsleep_secs = 0\n{VERIFY}verify_attempts = 1\n+++\nWork.\n'
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "bot rb")
    out = run_cli("run", "rb", "--json", "--trust-repo-bots", cwd=repo)
    assert out.returncode == 5, out.stderr
    (check,) = verifications("rb")
    assert [c["command"] for c in check["checks"]] == ["python3 test_calc.py"]
    assert 'verify = ["true"]' in git(
        repo, "show", f"{json.loads(out.stdout)['branch']}:.openbot/bots/rb/config.md"
    )


def test_a_verify_command_that_hangs_is_bounded_by_its_timeout(tmp_path: Path) -> None:
    repo = project(tmp_path)
    config = 'verify = ["sleep 600"]\nverify_timeout_secs = 0.5\nverify_attempts = 1\n'
    make_bot("hang", [reply("", complete())], config)
    out = run_cli("run", "hang", "--json", cwd=repo)
    assert out.returncode == 5, out.stderr
    ((check,),) = [v["checks"] for v in verifications("hang")]
    assert check["timed_out"] and check["exit_code"] is None
    assert "timed out" in json.loads(out.stdout)["reason"]


def test_the_check_imports_the_committed_work_not_the_users_editable_install(tmp_path: Path) -> None:
    from tests.run.test_setup_step import python_project, users_venv

    repo = python_project(tmp_path / "repo")
    env = users_venv(tmp_path, repo)  # `import mypkg` would answer from the user's checkout: 42
    worse = shell("sed -i s/42/41/ src/mypkg/__init__.py && git commit -qam 'worse'")
    check = "python -c 'import mypkg, sys; sys.exit(mypkg.answer() != 42)'"
    make_bot(
        "edit",
        [reply("", worse), reply("", complete())],
        f"verify = [{json.dumps(check)}]\nverify_attempts = 1",
    )
    out = run_cli("run", "edit", "--json", cwd=repo, env=env)
    assert out.returncode == 5, out.stderr
    (failed,) = verifications("edit")
    assert failed["checks"][0]["exit_code"] == 1


def test_an_unverified_run_resumes_with_its_branch_and_new_attempts(tmp_path: Path) -> None:
    repo = project(tmp_path)
    bot_dir = make_bot("again", [reply("", complete("done", "merge"))], VERIFY + "verify_attempts = 1\n")
    first = run_cli("run", "again", "--json", cwd=repo)
    assert first.returncode == 5, first.stderr
    # the script goes on after the reply the conversation holds (docs/SCRIPTED.md)
    script = {
        "responses": [
            reply("", complete("done", "merge")),
            reply("", FIX),
            reply("", complete("fixed", "merge")),
        ]
    }
    (bot_dir / "script.json").write_text(json.dumps(script))
    resumed = run_cli("run", "again", "--resume", json.loads(first.stdout)["run_id"], "--json", cwd=repo)
    assert resumed.returncode == 0, resumed.stderr
    result = json.loads(resumed.stdout)
    assert result["status"] == "completed" and result["verified"] is True and result["action"] == "merge"
    assert git(repo, "rev-parse", "main") == result["verified_sha"]


def test_the_check_has_no_network_even_when_the_agent_has(tmp_path: Path) -> None:
    import socket

    repo = project(tmp_path)
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        port = server.getsockname()[1]
        reach = f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 5)\""
        agent = shell(reach)  # the agent may connect (network = true): the check may not
        config = f"network = true\nverify = [{json.dumps(reach)}]\nverify_attempts = 1\n"
        make_bot("net", [reply("", agent), reply("", complete())], config)
        out = run_cli("run", "net", "--json", cwd=repo)
    assert out.returncode == 5, out.stderr
    ran = [json.loads(x) for s in sessions("net") for x in (s / "events.jsonl").read_text().splitlines()]
    assert [e["exit_code"] for e in ran if e["type"] == "command"] == [0]
    (check,) = verifications("net")
    assert check["checks"][0]["exit_code"] != 0 and "Error" in check["checks"][0]["output"]


def test_merge_unverified_merges_work_that_failed_its_check_and_says_so(tmp_path: Path) -> None:
    repo = project(tmp_path)
    work = shell("echo n > NOTES.md && git add NOTES.md && git commit -qm notes")
    config = VERIFY + "verify_attempts = 1\nmerge_unverified = true\n"
    make_bot("loose", [reply("", work), reply("", complete("done", "merge"))], config)
    out = run_cli("run", "loose", "--json", cwd=repo)
    assert out.returncode == 5, out.stderr
    result = json.loads(out.stdout)
    assert result["status"] == "unverified" and result["merge_unverified"] is True
    assert result["action"] == "merge" and (repo / "NOTES.md").read_text() == "n\n"
    assert "NOT verified" in out.stderr and "merge_unverified = true: merge applies without it" in out.stderr


def test_a_failed_check_says_why_with_its_outputs_tail_redacted_and_inert(tmp_path: Path) -> None:
    """The terminal, `history --session`, the HTML page and the notification show the end of the failed
    check's output (not only "exited with 1"); a key in it is redacted, a terminal escape spelled out."""
    check = (
        "print('sk-ant-' + 'A' * 24)\n"
        "print('\\x1b]52;c;cHduZWQ=\\x07 boom')\n"
        "raise SystemExit('No module named frobnicate')\n"
    )
    files = {"test_calc.py": check}
    repo = make_repo(tmp_path / "repo", files)
    hook = tmp_path / "notified.json"
    notify = f'[[notify]]\ncommand = ["sh", "-c", "cat > {hook}"]\non = ["unverified"]\n'
    make_bot(
        "why",
        [reply("", complete("done", "merge"))],
        VERIFY + "verify_attempts = 1\nsleep_secs = 0\n" + notify,
    )
    out = run_cli("run", "why", cwd=repo)
    assert out.returncode == 5, out.stderr
    end = out.stderr[out.stderr.index("openbot: run ") :]
    assert "No module named frobnicate" in end  # under the end line's "NOT verified"
    history = run_cli("history", "why", "--session", "1", cwd=repo)
    assert history.stdout.count("No module named frobnicate") >= 2, history.stdout  # metadata and event
    page = run_cli("history", "why", "--export", "html", "-o", str(tmp_path / "t.html"), cwd=repo)
    assert page.returncode == 0, page.stderr
    html = (tmp_path / "t.html").read_text()
    assert '<div class="text">not verified at' in html and "    No module named frobnicate" in html
    body = json.loads(hook.read_text())
    assert "No module named frobnicate" in body["text"]
    for shown in (out.stderr, history.stdout, html, body["text"]):
        assert "sk-ant-AAAA" not in shown and "\x1b" not in shown and "\\x1b]52;c;" in shown
