"""A repository whose top holds an `openbot/` package: openbot's own `openbot run` children (attempts, fleet,
eval) start with the model keys beside the walls from that repository's directory. `python -m`/`-c` put the
working directory first on sys.path, so the planted package ran in place of openbot, with the keys; the gate
now refuses openbot's interpreter without -P or -I."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from openbot import gate
from tests.helpers import complete, make_bot, make_repo, reply, shell

KEY = {"ANTHROPIC_API_KEY": "sk-ant-planted-test", "OPENAI_API_KEY": "sk-openai-planted-test"}


def planted(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """A repository's files with an `openbot` package that records the environment it was imported with."""
    marker = tmp_path / "planted-ran.json"
    code = f"import json, os\nopen({str(marker)!r}, 'w').write(json.dumps(dict(os.environ)))\n"
    files = {
        "openbot/__init__.py": code,
        "openbot/__main__.py": "",
        "calc.py": "def answer():\n    return 41\n",
        "test_calc.py": "from calc import answer\n\nassert answer() == 42\n",
    }
    return files, marker


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    # The test's own openbot is started with -P: only the children openbot starts could find the plant.
    env = {**os.environ, **KEY}
    argv = [sys.executable, "-P", "-m", "openbot", *args]
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


FIX = [
    reply("", shell("sed -i s/41/42/ calc.py && git commit -qam fix")),
    reply("", complete("fixed", "merge")),
]
CHECKED = 'verify = ["python3 test_calc.py"]\nverify_attempts = 1\n'


def test_attempts_never_import_the_repositorys_openbot(tmp_path: Path) -> None:
    files, marker = planted(tmp_path)
    repo = make_repo(tmp_path / "repo", files)
    make_bot("tries", FIX, CHECKED)
    out = cli("run", "tries", "--attempts", "2", "--attempts-parallel", "1", "--json", cwd=repo)
    assert not marker.exists(), "the repository's openbot package ran in openbot's attempt"
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["verified"] is True


def test_fleet_runs_never_import_the_repositorys_openbot(tmp_path: Path) -> None:
    files, marker = planted(tmp_path)
    make_repo(tmp_path / "app", files)
    make_bot("fixer", FIX, CHECKED)
    (tmp_path / "fleet.toml").write_text('bots = ["fixer"]\n[[repo]]\npath = "app"\n')
    out = cli("fleet", "run", "fleet.toml", "--json", cwd=tmp_path)
    assert not marker.exists(), "the repository's openbot package ran in the fleet's run"
    assert out.returncode == 0, out.stderr


def test_eval_runs_never_import_the_tasks_openbot(tmp_path: Path) -> None:
    files, marker = planted(tmp_path)
    files = {**files, "tests/check_calc.py": "print('no test yet')\n"}
    repo = make_repo(tmp_path / "proj", files)
    (repo / "calc.py").write_text("def answer():\n    return 42\n")
    (repo / "tests" / "check_calc.py").write_text("from calc import answer\n\nassert answer() == 42\n")
    subprocess.run(["git", "commit", "-qam", "Make answer() 42"], cwd=repo, check=True)
    make_bot("redo", FIX)
    check = ("--check", "PYTHONPATH=. python3 {tests}", "--max-iterations", "2")
    out = cli("eval", "--from-history", "1", "--bot", "redo", *check, "--json", "o.json", cwd=repo)
    assert not marker.exists(), "the task repository's openbot package ran in eval's run"
    assert out.returncode == 0, out.stderr + out.stdout


@pytest.mark.parametrize("flags", [["-m", "openbot"], ["-c", "pass"], ["-S", "-m", "openbot"], ["script.py"]])
def test_the_gate_refuses_openbots_python_that_reads_the_working_directory(flags: list[str]) -> None:
    with pytest.raises(gate.GateError, match="without -P or -I"):
        gate.run(gate.RUN_ATTEMPT, [sys.executable, *flags])
