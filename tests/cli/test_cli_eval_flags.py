"""`openbot eval`'s --tasks, --parallel, --attempts and --check-as-verify, through the real CLI with a
scripted bot over small recipe repositories (as tests/cli/test_cli_eval.py)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import complete, make_bot, reply, run_cli, shell

CALC = "def double(x):\n    return x\n"
TEST = "from calc import double\nassert double(3) == 6, double(3)\nprint('ok')\n"
FIX = "sed -i 's/return x$/return 2 * x/' calc.py && git commit -qam fix\n"
WRONG = "sed -i 's/return x$/return x + 2/' calc.py && git commit -qam fix\n"
# Only the second attempt of a run fixes it (the attempt number reaches the bot's commands by env_passthrough)
SECOND = 'if [ "$OPENBOT_ATTEMPT" = 2 ]; then ' + FIX.strip() + "; else " + WRONG.strip() + "; fi\n"
SCRIPT = [reply("", shell("sh solve.sh")), reply("", complete("double() fixed"))]


def recipe(name: str, solve: str) -> str:
    files = {"calc.py": CALC, "test_calc.py": TEST, "solve.sh": solve}
    table = ", ".join(f"{json.dumps(k)} = {json.dumps(v)}" for k, v in files.items())
    return (
        f'[[task]]\nname = "{name}"\nprompt = "Make double() double."\ncheck = "python3 test_calc.py"\n'
        f"files = {{ {table} }}\n\n"
    )


def results(path: Path) -> dict[str, dict[str, object]]:
    return {r["name"]: r for r in json.loads(path.read_text())["results"]}


def test_tasks_picks_by_name_and_parallel_keeps_the_suites_order(tmp_path: Path) -> None:
    make_bot("fixer", SCRIPT)
    suite = tmp_path / "suite.toml"
    suite.write_text(
        'bot = "fixer"\n[defaults]\nmax_iterations = 1\n\n' + "".join(recipe(n, FIX) for n in "abc")
    )
    proc = run_cli("eval", str(suite), "--tasks", "c,a", "--parallel", "2", "--json", "o.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = json.loads((tmp_path / "o.json").read_text())
    assert [r["name"] for r in data["results"]] == ["a", "c"]  # the suite's order, b not run
    assert all(r["solved"] for r in data["results"]) and "[1/2] a" in proc.stderr and " b " not in proc.stderr
    bad = run_cli("eval", str(suite), "--tasks", "a,zz", cwd=tmp_path)
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.strip().splitlines() == [
        "openbot: error: --tasks: no task named 'zz' (the tasks are: a, b, c)"
    ]


def test_check_as_verify_makes_openbot_check_the_work_with_the_tasks_check(tmp_path: Path) -> None:
    make_bot("fixer", SCRIPT, config="verify_attempts = 1\nverify = []")  # no check, not even the default
    suite = tmp_path / "suite.toml"
    suite.write_text(
        'bot = "fixer"\n[defaults]\nmax_iterations = 1\n\n' + recipe("good", FIX) + recipe("bad", WRONG)
    )
    plain = run_cli("eval", str(suite), "--json", "plain.json", cwd=tmp_path)
    by = results(tmp_path / "plain.json")
    assert by["bad"]["exit_code"] == 0 and by["bad"]["verified"] == "", plain.stderr  # nothing checked it
    proc = run_cli("eval", str(suite), "--check-as-verify", "--json", "o.json", cwd=tmp_path)
    by = results(tmp_path / "o.json")
    assert by["good"]["verified"] == "verified" and by["good"]["solved"], proc.stderr
    assert by["bad"]["verified"] == "unverified" and by["bad"]["exit_code"] == 5 and not by["bad"]["solved"]
    assert json.loads((tmp_path / "o.json").read_text())["check_as_verify"] is True


def test_attempts_are_passed_to_each_run_and_the_verified_attempt_is_checked(tmp_path: Path) -> None:
    config = 'verify_attempts = 1\nenv_passthrough = ["OPENBOT_ATTEMPT"]\nattempts_parallel = 1'
    make_bot("fixer", SCRIPT, config=config)  # one attempt at a time: the first one's calls all happen
    suite = tmp_path / "suite.toml"
    suite.write_text('bot = "fixer"\n[defaults]\nmax_iterations = 1\n\n' + recipe("second", SECOND))
    once = run_cli("eval", str(suite), "--check-as-verify", "--json", "once.json", cwd=tmp_path)
    assert once.returncode == 1 and not results(tmp_path / "once.json")["second"]["solved"]
    proc = run_cli(
        "eval",
        str(suite),
        "--check-as-verify",
        "--attempts",
        "2",
        "--json",
        "o.json",
        cwd=tmp_path,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    r = results(tmp_path / "o.json")["second"]
    assert r["solved"] and r["verified"] == "verified" and r["exit_code"] == 0
    assert r["model_calls"] == 4  # both attempts' calls are counted
