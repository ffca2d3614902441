"""`openbot run --attempts N` / `attempts = N`, through the real CLI with scripted bots: independent attempts
in their own run repositories, the first verified one kept with its branch and its merge, the others'
branches deleted and said; a bot with nothing to check refused before anything runs."""

from __future__ import annotations

import json
from pathlib import Path

from openbot import paths
from openbot.testing.fakeopenai import FakeOpenAI
from openbot.testing.fakeopenai import reply as fake_reply
from tests.helpers import complete, git, make_bot, make_repo, reply, run_cli, shell

FILES = {
    "calc.py": "def answer():\n    return 41\n",
    "test_calc.py": "from calc import answer\n\nassert answer() == 42, 'answer() is not 42'\nprint('ok')\n",
}
CHECKED = 'verify = ["python3 test_calc.py"]\nverify_attempts = 1\nenv_passthrough = ["OPENBOT_ATTEMPT"]\n'
# Every attempt replays the same script; only the second one's command fixes the answer.
WORK = shell(
    'if [ "$OPENBOT_ATTEMPT" = 2 ]; then sed -i s/41/42/ calc.py; fi; '
    'echo "attempt $OPENBOT_ATTEMPT" > NOTES.md && git add -A && git commit -qm "attempt $OPENBOT_ATTEMPT"'
)
SCRIPT = [reply("", WORK), reply("", complete("done", "merge"))]


def branches(repo: Path) -> list[str]:
    return git(repo, "branch", "--list", "openbot/*", "--format=%(refname:short)").split()


def runs(bot: str) -> list[Path]:
    return sorted(paths.bot_home(bot).glob("workspaces/*/runs/*/run.json"))


def test_attempt_1_fails_its_check_attempt_2_passes_and_is_kept_merged_attempt_1_discarded(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    make_bot("tries", SCRIPT, CHECKED)
    out = run_cli("run", "tries", "--attempts", "2", "--attempts-parallel", "1", "--json", cwd=repo)
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert summary["status"] == "completed" and summary["verified"] is True
    assert [(a["attempt"], a["verified"], a["kept"]) for a in summary["attempts"]] == [
        (1, False, False),
        (2, True, True),
    ]
    # The kept attempt's action happened: its verified work is merged.
    assert "return 42" in (repo / "calc.py").read_text()
    assert git(repo, "show", "main:NOTES.md") == "attempt 2"
    # Attempt 1's run is recorded, its branch gone, and both said in one line each.
    records = {r["status"]: r for r in (json.loads(p.read_text()) for p in runs("tries"))}
    assert sorted(records) == ["completed", "unverified"]
    first = records["unverified"]
    assert first["branch"] not in branches(repo)
    lines = [line for line in out.stderr.splitlines() if line.startswith("openbot: attempt ")]
    assert lines[0] == "openbot: attempt 1 of 2 starts" and lines[1] == "openbot: attempt 2 of 2 starts"
    said = f"openbot: attempt 1: unverified (openbot's check failed), discarded (branch {first['branch']}"
    assert lines[2].startswith(said + " deleted; restore with `git branch")
    assert lines[3] == f"openbot: attempt 2: verified, kept: branch {summary['branch']}"


def test_attempts_side_by_side_keep_the_verified_one_and_leave_no_other_branch(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    make_bot("pair", SCRIPT, CHECKED + "attempts = 2\nattempts_parallel = 2\n")
    out = run_cli("run", "pair", "--json", cwd=repo)
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    kept = [a for a in summary["attempts"] if a["kept"]]
    assert kept == [{"attempt": 2, "status": "completed", "verified": True, "kept": True, "exit_code": 0}]
    assert git(repo, "show", "main:NOTES.md") == "attempt 2"
    assert set(branches(repo)) <= {summary["branch"]}  # attempt 1 (checked and failed, or stopped): gone
    logs = paths.home() / "attempts"
    assert f"2 attempts, 2 at a time; their output: {logs}" in out.stderr


def test_the_key_attempts_and_a_first_verified_attempt_start_no_second(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    fixed = shell("sed -i s/41/42/ calc.py && git commit -qam fix")
    make_bot(
        "once",
        [reply("", fixed), reply("", complete("done", "merge"))],
        CHECKED + "attempts = 3\nattempts_parallel = 1\n",
    )
    out = run_cli("run", "once", "--output", "jsonl", cwd=repo)
    assert out.returncode == 0, out.stderr
    records = [json.loads(line) for line in out.stdout.splitlines()]
    assert records[-1]["type"] == "run_summary" and records[-1]["verified"] is True
    assert [a["attempt"] for a in records[-1]["attempts"]] == [1]
    assert any(r["type"] == "tool_call" for r in records[:-1])  # the attempt's own stream came through
    assert len(runs("once")) == 1 and "attempt 2" not in out.stderr


def test_attempts_without_a_check_to_choose_by_are_refused_before_anything_runs(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"calc.py": FILES["calc.py"]})  # no tests a default check could run
    make_bot("blind", SCRIPT)
    out = run_cli("run", "blind", "--attempts", "2", cwd=repo)
    assert out.returncode == 2
    (line,) = out.stderr.strip().splitlines()
    assert line.startswith(
        "openbot: error: attempts = 2 keeps the first attempt openbot verified, but the bot"
    )
    assert "has no `verify`" in line and "docs/VERIFY.md" in line
    assert runs("blind") == [] and branches(repo) == []


def test_each_attempt_on_a_chat_completions_server_after_the_first_sends_its_own_seed(tmp_path: Path) -> None:
    # llama-server with a fixed --seed answers the same request the same way: attempt 2 must not repeat 1.
    repo = make_repo(tmp_path / "repo", FILES)
    commit = {"command": "echo x >> NOTES.md && git add -A && git commit -qm x"}
    work = "```json\n" + json.dumps({"name": "shell", "arguments": commit}) + "\n```"
    done = '```json\n{"name": "session_complete", "arguments": {"summary": "done", "action": "review"}}\n```'
    model = "qwen2.5-coder-1.5b"
    with FakeOpenAI([fake_reply(work), fake_reply(done)] * 2, models={model: {}}) as api:
        config = f'model = "llamacpp:{model}"\nbase_url = "{api.base_url}"\nseed = 7\nwork_mode = "tools"\n'
        bot_dir = paths.bot_home("seeded")
        bot_dir.mkdir(parents=True)
        (bot_dir / "config.md").write_text(
            f"+++\n{config}sleep_secs = 0\nmax_iterations = 1\n{CHECKED}+++\nWork.\n"
        )
        out = run_cli("run", "seeded", "--attempts", "2", cwd=repo)
        seeds = [body.get("seed") for body in api.bodies]
    assert out.returncode == 5, out.stderr  # neither attempt fixed calc.py: the last one is kept, unverified
    assert seeds == [7, 7, 8, 8]  # one at a time on a local server: attempt 1's two calls, then attempt 2's
    assert "attempt 1: unverified (openbot's check failed), discarded" in out.stderr
    assert "attempt 2: unverified (openbot's check failed), kept" in out.stderr
