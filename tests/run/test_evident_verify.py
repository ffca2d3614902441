"""Checks by default where the repository has them: no `verify` and an evident test command → it checks the
work (said at start); `verify = []` turns it off; a completed run nothing checked says so where it ends."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import complete, make_bot, make_repo, reply, run_cli, sessions, shell

FILES = {
    "pyproject.toml": '[project]\nname = "calc"\nversion = "0"\n\n[tool.pytest.ini_options]\n',
    "calc.py": "def add(a, b):\n    return a + b\n",
    "test_calc.py": (
        "import unittest\n\nfrom calc import add\n\n\n"
        "class Add(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n"
    ),
}
SAID = "(evident test command; `verify = []` turns it off)"
NOTHING = "not verified: nothing checked the work"


def edit_and_complete(body: str) -> list[dict[str, object]]:
    write = f"printf 'def add(a, b):\\n    return {body}\\n' > calc.py && git commit -qam change"
    return [reply("", shell(write)), reply("", complete("changed add"))]


def test_a_pytest_suite_is_the_check_when_nothing_is_declared_and_a_failing_test_is_unverified(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "calc", FILES)
    make_bot("calc", edit_and_complete("a - b"), config="max_iterations = 1\nverify_attempts = 1")
    shown = json.loads(run_cli("bots", "show", "calc", "--json", cwd=repo).stdout)["verification"]
    evident = shown["evident"]
    assert evident in ("python -m pytest -q", "python3 -m pytest -q", "python3 -m unittest")
    out = run_cli("run", "calc", "--json", cwd=repo)
    assert out.returncode == 5, out.stderr
    assert f"checking the work with `{evident}` {SAID}" in out.stderr.split("── session 1")[0]  # at the start
    result = json.loads(out.stdout)
    assert result["status"] == "unverified" and result["verification_status"] == "failed"
    assert [c["command"] for c in result["verification"]["checks"]] == [evident]


def test_a_passing_suite_verifies_the_work(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "calc", FILES)
    make_bot("calc", edit_and_complete("b + a"), config="max_iterations = 1")
    out = run_cli("run", "calc", "--json", cwd=repo)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["verified"] is True and result["verification_status"] == "passed"
    assert NOTHING not in out.stderr


def test_verify_empty_turns_it_off_and_a_run_nothing_checked_says_so_where_it_ends(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "calc", FILES)
    told = tmp_path / "told.json"
    notify = f'sleep_secs = 0\n[[notify]]\ncommand = ["sh", "-c", "cat > \'{told}\'"]'
    make_bot("calc", edit_and_complete("a - b"), config=f"max_iterations = 1\nverify = []\n{notify}")
    out = run_cli("run", "calc", "--json", cwd=repo)
    assert out.returncode == 0, out.stderr  # exit 0 stays: nothing checked it, and it says so
    assert SAID not in out.stderr
    assert f"  {NOTHING}" in out.stderr.split("openbot: run ")[-1]  # the end lines
    result = json.loads(out.stdout)
    assert result["verified"] is None and result["verification_status"] == "none"
    assert result["verified_text"] == NOTHING
    assert NOTHING in json.loads(told.read_text())["text"]  # the notification
    assert f"[{NOTHING}]" in run_cli("history", "calc", cwd=repo).stdout
    page = tmp_path / "page.html"
    exported = run_cli("history", "calc", "--export", "html", "--output", str(page), cwd=repo)
    assert exported.returncode == 0, exported.stderr
    assert NOTHING in page.read_text()
    assert any(NOTHING in line for line in (sessions("calc")[0] / "events.jsonl").read_text().split("\n"))


def test_no_evident_command_and_no_verify_is_said_too(repo: Path) -> None:
    make_bot(
        "plain", [reply("", shell("echo x > x && git add x && git commit -qm x")), reply("", complete())]
    )
    out = run_cli("run", "plain", "--json", cwd=repo)
    assert out.returncode == 0, out.stderr
    assert SAID not in out.stderr and json.loads(out.stdout)["verified_text"] == NOTHING


SRC_LAYOUT = {  # tests inside the package, under src/: they import only with src on the path
    "setup.cfg": "[metadata]\nname = calc\n",
    "src/calc/__init__.py": "",
    "src/calc/ops.py": "def add(a, b):\n    return a + b\n",
    "src/calc/tests/__init__.py": "",
    "src/calc/tests/test_ops.py": (
        "import unittest\n\nfrom calc.ops import add\n\n\n"
        "class Add(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n"
    ),
}
NO_PYTEST = {"PATH": "/usr/bin:/bin"}  # unittest's command, whatever the machine has installed


def test_a_src_layouts_package_tests_are_the_check(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "calc", SRC_LAYOUT)
    write = "printf 'def add(a, b):\\n    return a - b\\n' > src/calc/ops.py && git commit -qam change"
    make_bot(
        "calc", [reply("", shell(write)), reply("", complete())], "max_iterations = 1\nverify_attempts = 1"
    )
    out = run_cli("run", "calc", "--json", cwd=repo, env=NO_PYTEST)
    evident = "PYTHONPATH=src python3 -m unittest discover -s src/calc/tests -t src"
    assert f"checking the work with `{evident}` {SAID}" in out.stderr, out.stderr
    assert out.returncode == 5 and json.loads(out.stdout)["verification_status"] == "failed", out.stderr
    good = "printf 'def add(a, b):\\n    return b + a\\n' > src/calc/ops.py && git commit -qam change"
    make_bot("calc", [reply("", shell(good)), reply("", complete())], "max_iterations = 1")
    out = run_cli("run", "calc", "--json", cwd=repo, env=NO_PYTEST)
    assert out.returncode == 0 and json.loads(out.stdout)["verification_status"] == "passed", out.stderr
