"""`openbot eval` through the real CLI: a scripted bot over a suite of small repositories.

The bot's script is the same for every task (each task gets a fresh copy of the bot); what differs is the
repository: its `solve.sh` (run by the bot) fixes the code, breaks it, or does nothing, and the task's
max_iterations decides whether the run reaches its `session_complete` (claims done) or stops at the limit.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import complete, git, make_bot, make_repo, remove_tree, reply, run_cli, shell

CALC = "def double(x):\n    return x\n"
TEST = "from calc import double\nassert double(3) == 6, double(3)\nprint('ok')\n"
COMMIT = "git commit -qam fix\n"
FIX = "sed -i 's/return x$/return 2 * x/' calc.py\n"
SCRIPT = [
    reply("Running the fixer.", shell("sh solve.sh")),
    reply("Let me think about it."),  # text only: iteration 1 ends here
    reply("Done.", complete("double() fixed")),
]


def _recipe(name: str, solve: str, iterations: int) -> str:
    files = {"calc.py": CALC, "test_calc.py": TEST, "solve.sh": solve}
    table = ", ".join(f"{json.dumps(k)} = {json.dumps(v)}" for k, v in files.items())
    return (
        f'[[task]]\nname = "{name}"\nprompt = "Make double() double."\ncheck = "python3 test_calc.py"\n'
        f"max_iterations = {iterations}\nfiles = {{ {table} }}\n\n"
    )


def test_eval_reports_solved_unsolved_and_claimed_done_but_failing(tmp_path: Path) -> None:
    make_bot("fixer", SCRIPT, config="verify = []")  # not the evident test: a wrong fix may claim done
    repo = make_repo(tmp_path / "calc", {"calc.py": CALC, "test_calc.py": TEST, "solve.sh": "true\n"})
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "solve.sh").write_text(FIX)
    git(repo, "commit", "-qam", "a solver")
    git(repo, "checkout", "-q", "main")
    suite = tmp_path / "suite.toml"
    suite.write_text(
        'bot = "fixer"\n[defaults]\nmax_minutes = 10\n\n'
        + _recipe("solved", FIX, 2)
        + _recipe("gave-up", "true\n", 1)  # stops at the limit, fixes nothing
        + _recipe("claims-done", "sed -i 's/return x$/return x + 2/' calc.py\n", 2)  # wrong fix, completes
        + '[[task]]\nname = "from-repo"\nrepo = "calc"\nbase = "feature"\nprompt = "Fix it."\n'
        'check = "python3 test_calc.py"\nmax_iterations = 2\n'
    )
    out = tmp_path / "out.json"
    proc = run_cli("eval", str(suite), "--json", str(out), cwd=tmp_path, timeout=600)
    assert proc.returncode == 1, proc.stderr  # not every task was solved
    data = json.loads(out.read_text())
    by = {r["name"]: r for r in data["results"]}
    assert (data["solved"], data["tasks"]) == (2, 4)
    assert (
        by["solved"]["solved"] and by["solved"]["status"] == "completed" and by["solved"]["check_exit"] == 0
    )
    assert (
        not by["gave-up"]["solved"] and by["gave-up"]["exit_code"] == 3 and not by["gave-up"]["claimed_done"]
    )
    claimed = by["claims-done"]
    assert claimed["status"] == "completed" and claimed["exit_code"] == 0 and claimed["claimed_done"]
    assert not claimed["solved"] and claimed["check_exit"] == 1
    assert by["from-repo"]["solved"]
    for r in data["results"]:
        assert r["model_calls"] >= 2 and r["tool_calls"] >= 1 and r["tokens"] > 0, r
    assert by["solved"]["model_calls"] == 3 and by["solved"]["tool_calls"] == 2
    assert "| claims-done | **no — claimed done** | failed (1) | 0 | completed |" in proc.stdout
    # the progress line on the terminal is plain text, not markdown (it printed the table's `**`)
    (progress,) = [ln for ln in proc.stderr.splitlines() if "claims-done: " in ln]
    assert "NO — claimed done" in progress and "**" not in progress
    assert "solves 2 of 4 at $0.0000 each" in proc.stdout
    assert "1 claimed done but failed the check" in proc.stdout
    # The user's repository was only read: no bot branch, no new commit.
    assert git(repo, "branch", "--format=%(refname:short)").split() == ["feature", "main"]


def test_eval_checks_the_branch_not_the_bots_checkout(tmp_path: Path) -> None:
    # The bot makes the check pass only in its own checkout (an ignored file, never committed).
    make_bot("fixer", SCRIPT)
    make_repo(tmp_path / "r", {".gitignore": "built.txt\n", "solve.sh": "touch built.txt\n"})
    (tmp_path / "suite.toml").write_text(
        'bot = "fixer"\n[[task]]\nrepo = "r"\nprompt = "p"\ncheck = "test -f built.txt"\nmax_iterations = 2\n'
    )
    proc = run_cli("eval", "suite.toml", "--json", "o.json", "--keep", cwd=tmp_path, timeout=300)
    result = json.loads((tmp_path / "o.json").read_text())["results"][0]
    assert result["status"] == "completed" and not result["solved"], proc.stderr
    kept = Path(proc.stderr.split("kept: ")[1].split()[0])
    try:
        assert (kept / "task-001" / "check").is_dir()
        assert not (kept / "task-001" / "check" / "built.txt").exists()
    finally:
        remove_tree(kept)  # its task's detached rm may still be emptying the trash there


def test_eval_from_history_redoes_a_commit_checked_by_its_own_tests(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "proj", {"calc.py": CALC, "tests/check_calc.py": "print('no test yet')\n"})
    (repo / "calc.py").write_text("def double(x):\n    return 2 * x\n")
    (repo / "tests" / "check_calc.py").write_text("import sys\nsys.path.insert(0, '.')\n" + TEST)
    git(repo, "commit", "-qam", "Make double() double")
    (repo / "README.md").write_text("docs only\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "docs")  # no tests: not a task
    make_bot("redo", [reply("", shell(FIX.strip())), reply("", complete())])
    # A bot that "passes" by rewriting the test is judged by the commit's own test all the same.
    make_bot("cheat", [reply("", shell("echo 'print(1)' > tests/check_calc.py")), reply("", complete())])
    check = ("--check", "python3 {tests}", "--max-iterations", "1")
    good = run_cli("eval", "--from-history", "3", "--bot", "redo", *check, "--json", "g.json", cwd=repo)
    assert good.returncode == 0, good.stderr
    data = json.loads((repo / "g.json").read_text())
    assert data["tasks"] == 1 and data["solved"] == 1
    assert "Make double() double" in data["results"][0]["name"]
    assert "solves 1 of 1 at $0.0000 each" in good.stdout
    bad = run_cli("eval", "--from-history", "1", "--bot", "cheat", *check, "--json", "b.json", cwd=repo)
    assert bad.returncode == 1, bad.stderr
    cheat = json.loads((repo / "b.json").read_text())["results"][0]
    assert cheat["claimed_done"] and not cheat["solved"]
    # The user's checkout and branches are as they were.
    assert git(repo, "status", "--porcelain", "--untracked-files=no") == ""
    assert git(repo, "branch", "--format=%(refname:short)").split() == ["main"]


def test_eval_bad_suite_is_one_line_exit_2(tmp_path: Path) -> None:
    make_bot("fixer", SCRIPT)
    (tmp_path / "s.toml").write_text('bot = "fixer"\n[[task]]\nname = "a"\nprompt = "p"\nfiles = {a = "b"}\n')
    proc = run_cli("eval", "s.toml", cwd=tmp_path)
    assert proc.returncode == 2
    assert "s.toml: task 'a' has no 'check'" in proc.stderr and "Traceback" not in proc.stderr
    (tmp_path / "s.toml").write_text('[[task]]\nprompt = "p"\ncheck = "true"\nfiles = {a = "b"}\n')
    proc = run_cli("eval", "s.toml", "--bot", "nobody", cwd=tmp_path)
    assert proc.returncode == 2 and "no bot 'nobody'" in proc.stderr


def test_eval_shows_the_runs_own_verification_beside_the_check(tmp_path: Path) -> None:
    # A bot whose verify command is the task's test: openbot's verdict is shown, the check still decides.
    make_bot(
        "fixer",
        [reply("", shell("sh solve.sh")), reply("", complete())],
        config='verify = ["python3 test_calc.py"]\nverify_attempts = 1',
    )
    (tmp_path / "suite.toml").write_text(
        'bot = "fixer"\n[defaults]\nmax_iterations = 1\n\n'
        + _recipe("fixed", FIX + COMMIT, 1)  # openbot verifies what is committed
        + _recipe("broken", "sed -i 's/return x$/return x + 2/' calc.py\n" + COMMIT, 1)
    )
    proc = run_cli("eval", "suite.toml", "--json", "o.json", cwd=tmp_path, timeout=600)
    by = {r["name"]: r for r in json.loads((tmp_path / "o.json").read_text())["results"]}
    assert by["fixed"]["verified"] == "verified" and by["fixed"]["solved"], proc.stderr
    broken = by["broken"]
    assert broken["verified"] == "unverified" and broken["exit_code"] == 5 and not broken["solved"]
    assert not broken["claimed_done"]  # openbot itself did not call it done
    assert "| broken | no | failed (1) | 5 | unverified | unverified |" in proc.stdout
    assert "the run's own verification agreed with the check on 2 of 2" in proc.stdout


def test_eval_says_why_a_run_never_started(tmp_path: Path) -> None:
    make_bot("fixer", SCRIPT, config="max_iterations = -1")  # a config openbot run refuses (exit 2)
    (tmp_path / "s.toml").write_text('bot = "fixer"\n' + _recipe("t", FIX, 1))
    proc = run_cli("eval", "s.toml", "--json", "o.json", cwd=tmp_path)
    result = json.loads((tmp_path / "o.json").read_text())["results"][0]
    assert proc.returncode == 1 and result["exit_code"] == 2 and not result["solved"]
    assert result["error"].startswith("openbot run exited 2: ") and "max_iterations" in result["error"]
