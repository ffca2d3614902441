"""Verification through the real CLI, as every view shows it: the Messages API loopback server (the bot
is told in its next request), --output jsonl, the CI step summary, notifications, history and the HTML
page; the team's verify.toml; `bots show` with and without verify commands; bad values exit 2."""

from __future__ import annotations

import json
from pathlib import Path

from openbot import paths
from openbot.testing.fakeapi import FakeAnthropic
from openbot.testing.fakeapi import reply as api_reply
from tests.helpers import complete, git, make_bot, make_repo, reply, run_cli, sessions, shell

FILES = {
    "calc.py": "def answer():\n    return 41\n",
    "test_calc.py": "from calc import answer\n\nassert answer() == 42, 'answer() is not 42'\n",
}
VERIFY = 'verify = ["python3 test_calc.py"]\n'
WORKFLOW = "jobs:\n  t:\n    steps:\n      - run: ruff check .\n      - run: ls\n"
KEY = "sk-ant-api03-TESTKEY-do-not-leak-0123456789abcdef"


def call(name: str, **input: str) -> dict[str, object]:
    return {"name": name, "input": input}


def test_on_the_messages_api_the_bot_is_told_what_failed_in_its_next_request(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    d = paths.bot_home("claude")
    d.mkdir(parents=True)
    config = f'model = "claude-sonnet-5-5"\nsleep_secs = 0\nquestion_unchanged = false\n{VERIFY}'
    (d / "config.md").write_text(f"+++\n{config}+++\nWork.\n")  # about the check, not the question
    done = call("session_complete", summary="done", action="review")
    fix = call("shell", command="sed -i s/41/42/ calc.py && git commit -qam fix")
    script = [
        api_reply("", tool_calls=[done]),
        api_reply("", tool_calls=[fix]),
        api_reply("", tool_calls=[done]),
    ]
    with FakeAnthropic(script) as api:
        out = run_cli(
            "run",
            "claude",
            "--json",
            cwd=repo,
            env={"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": api.base_url},
        )
        assert out.returncode == 0, out.stderr
        api.assert_done()
        bodies = api.bodies
    assert json.loads(out.stdout)["verified"] is True
    first = json.dumps(bodies[0]["messages"])
    assert "openbot runs `python3 test_calc.py` on a clean checkout of your committed work" in first
    told = bodies[1]["messages"][-1]["content"]
    assert told[0]["type"] == "tool_result"  # the answer to its session_complete, then what failed
    assert (
        "session_complete was not accepted" in told[-1]["text"] and "answer() is not 42" in told[-1]["text"]
    )


def test_an_unverified_run_in_jsonl_the_ci_summary_notifications_history_and_the_page(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    told, summary = tmp_path / "notified.json", tmp_path / "step-summary.md"
    notify = f'[[notify]]\ncommand = ["sh", "-c", "cat > \'{told}\'"]\non = ["unverified"]\n'
    make_bot(
        "nope",
        [reply("", complete("done", "merge"))],
        VERIFY + "verify_attempts = 1\nsleep_secs = 0\n" + notify,
    )
    env = {"CI": "true", "GITHUB_STEP_SUMMARY": str(summary)}
    out = run_cli("run", "nope", "--output", "jsonl", cwd=repo, env=env)
    assert out.returncode == 5, out.stderr
    records = [json.loads(line) for line in out.stdout.splitlines()]
    (check,) = [r for r in records if r["type"] == "verification"]
    assert check["passed"] is False and check["attempt"] == 1 and check["attempts"] == 1
    final = records[-1]
    assert final["type"] == "run_summary" and final["status"] == "unverified" and final["verified"] is False
    assert "NOT verified: `python3 test_calc.py` exited with 1" in out.stderr  # the report
    assert "✗ not verified at" in out.stderr  # the live view, as it happened
    assert "| Verified | NOT verified: `python3 test_calc.py` exited with 1 |" in summary.read_text()
    body = json.loads(told.read_text())
    assert body["status"] == "unverified" and "NOT verified" in body["text"]
    listing = run_cli("history", "nope", cwd=repo)
    assert "unverified" in listing.stdout and "[NOT verified]" in listing.stdout
    one = run_cli("history", "nope", "--session", "1", cwd=repo).stdout
    assert "verification:" in one and "[verification] not verified at" in one
    page = tmp_path / "page.html"
    assert run_cli("history", "nope", "--export", "html", "-o", str(page), cwd=repo).returncode == 0
    assert "verification: failed" in page.read_text()


def test_the_teams_verify_toml_applies_to_every_bot_and_bots_show_says_so(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    paths.home().mkdir(parents=True, exist_ok=True)
    (paths.home() / "verify.toml").write_text('verify = ["test -f NOTES.md"]\n')
    work = shell("echo n > NOTES.md && git add NOTES.md && git commit -qm notes")
    make_bot(
        "team", [reply("", complete("done", "merge")), reply("", work), reply("", complete("ok", "merge"))]
    )
    shown = run_cli("bots", "show", "team", cwd=repo).stdout
    assert "`test -f NOTES.md` (" in shown and "verify.toml)" in shown
    out = run_cli("run", "team", "--json", cwd=repo)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["verified"] is True and result["action"] == "merge"
    assert result["verification"]["checks"][0]["source"] == "team"
    assert (repo / "NOTES.md").read_text() == "n\n"  # merged: verified work


def test_bots_show_says_when_nothing_verifies_and_what_the_repository_suggests(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": "[tool.pytest.ini_options]\naddopts = '-q'\n",
            "package.json": json.dumps({"scripts": {"test": "jest"}}),
            "Makefile": "test:\n\tpytest\n",
            ".github/workflows/ci.yml": WORKFLOW,
        },
    )
    # verify = []: nothing checks it (no evident test command: the repository has no test files)
    make_bot("plain", [reply("", complete())], config="verify = []")
    shown = run_cli("bots", "show", "plain", cwd=repo)
    assert shown.returncode == 0, shown.stderr
    assert "verification: none" in shown.stdout and "merge is not applied" in shown.stdout
    assert 'verify = ["python -m pytest -q", "npm test", "make test", "ruff check ."]' in shown.stdout
    doc = json.loads(run_cli("bots", "show", "plain", "--json", cwd=repo).stdout)["verification"]
    assert doc == {
        "commands": [],
        "team": [],
        "suggested": ["python -m pytest -q", "npm test", "make test", "ruff check ."],
        "evident": "",
    }
    # A suggestion is never applied: the run checks nothing, and says so where it would merge.
    make_bot(
        "merger",
        [reply("", shell("echo x > x && git add x && git commit -qm x")), reply("", complete("x", "merge"))],
        config="verify = []",
    )
    result = json.loads(run_cli("run", "merger", "--json", cwd=repo).stdout)
    assert result["verified"] is None and result["action"] == "review"
    assert result["action_message"].startswith("not merged: no verify commands checked the work")


def test_bad_verify_values_exit_2_in_one_line_before_anything_exists(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    cases = {
        "zero": ("verify_attempts = 0\n", "key 'verify_attempts' must be 1 or more, up to 100, got 0"),
        "empty": ('verify = ["  "]\n', "key 'verify' has an empty command"),
        "nan": ("verify_timeout_secs = -1\n", "key 'verify_timeout_secs' must be more than 0"),
    }
    for name, (config, said) in cases.items():
        make_bot(name, [reply("", complete())], config)
        out = run_cli("run", name, cwd=repo)
        assert out.returncode == 2 and said in out.stderr and len(out.stderr.strip().splitlines()) == 1, (
            out.stderr
        )
    make_bot("loose", [reply("", complete())], VERIFY)
    out = run_cli("run", "loose", "--no-worktree", cwd=repo)
    assert out.returncode == 2 and "needs the run's own branch" in out.stderr, out.stderr
    (paths.home() / "verify.toml").write_text('verify = ["make lint"]\ntimeout = 3\n')
    out = run_cli("run", "loose", cwd=repo)
    assert out.returncode == 2 and "verify.toml: unknown key 'timeout'" in out.stderr, out.stderr
    assert not sessions("loose") and not git(repo, "branch", "--list", "openbot/*")


def test_a_long_failing_output_is_kept_whole_and_the_bot_told_where(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    config = 'verify = ["seq 1 20000; echo the-end; exit 1"]\nverify_attempts = 2\n'
    make_bot("long", [reply("", complete()), reply("", complete())], config)
    out = run_cli("run", "long", "--json", cwd=repo)
    assert out.returncode == 5, out.stderr
    check = json.loads(out.stdout)["verification"]["checks"][0]
    events = [json.loads(x) for x in (sessions("long")[0] / "events.jsonl").read_text().splitlines()]
    full = next(e for e in events if e["type"] == "verification")["checks"][0]["full_output_path"]
    assert check["full_output_path"] and Path(full).read_text().splitlines()[-1] == "the-end"
    assert "\n20000\n" in Path(full).read_text()
    conversation = next(paths.bot_home("long").glob("workspaces/*/runs/*/conversation.jsonl")).read_text()
    assert f"(full output: {full})" in conversation and "the-end" in conversation


def test_a_bot_whose_setup_downloads_is_warned_that_the_checks_setup_is_offline(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    config = 'setup = ["true"]\nsetup_network = true\nverify = ["true"]\n'
    make_bot("dl", [reply("", complete())], config)
    warning = "the verify commands' setup runs in a checkout of the bot's work, so without setup_network"
    assert warning in run_cli("bots", "show", "dl", cwd=repo).stdout
    out = run_cli("run", "dl", "--json", cwd=repo)
    assert out.returncode == 0 and json.loads(out.stdout)["verified"] is True, out.stderr
    assert warning in out.stderr
    make_bot("quiet", [reply("", complete())], 'setup = ["true"]\nverify = ["true"]\n')
    assert warning not in run_cli("run", "quiet", cwd=repo).stderr
