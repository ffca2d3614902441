"""The per-run setup step through the real CLI: it makes the environment the agent's commands get (a
Python project's tests import the bot's checkout, not the user's editable install), it is logged like
any command, a failure ends the run with exit 1 keeping the bot's work, and its cache survives runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from openbot import paths
from tests.helpers import complete, events, git, make_bot, make_repo, reply, run_cli, sessions, shell

# Offline stand-in for `pip install -e .`: what an editable install leaves is a .pth file naming src/.
EDITABLE = (
    "import os, sys, sysconfig\n"
    "site = sysconfig.get_paths()['purelib']\n"
    "open(os.path.join(site, 'mypkg.pth'), 'w').write(os.path.abspath(sys.argv[1]) + '\\n')\n"
)
SETUP = 'setup = ["python3 -m venv --without-pip .venv", ".venv/bin/python tools/editable.py src"]'


def python_project(path: Path) -> Path:
    """A small real Python project: a package under src/ and a script that installs it editable."""
    return make_repo(
        path,
        {
            "pyproject.toml": '[project]\nname = "mypkg"\nversion = "0.1"\n',
            "src/mypkg/__init__.py": "def answer():\n    return 42\n",
            "tools/editable.py": EDITABLE,
        },
    )


def users_venv(tmp_path: Path, repo: Path) -> dict[str, str]:
    """The user's own virtualenv with the package installed editable from their checkout, activated."""
    # Under OPENBOT_HOME only because the sandbox keeps that readable wherever the test's tmp dir is.
    venv = paths.home() / "user-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    subprocess.run(
        [str(venv / "bin" / "python"), str(repo / "tools" / "editable.py"), str(repo / "src")], check=True
    )
    return {"PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}", "VIRTUAL_ENV": str(venv)}


BREAK_AND_TEST = [
    reply("", shell("echo 'raise ImportError(\"broken in the worktree\")' > src/mypkg/__init__.py")),
    reply("", shell("python -c 'import mypkg; print(mypkg.answer())'")),
    reply("", complete("tested")),
]


def commands(bot: str) -> list[dict[str, object]]:
    return [e for s in sessions(bot) for e in events(s) if e["type"] == "command"]


def test_the_agents_tests_import_the_bots_checkout_not_the_users_editable_install(tmp_path: Path) -> None:
    repo = python_project(tmp_path / "repo")
    env = users_venv(tmp_path, repo)
    make_bot("plain", BREAK_AND_TEST, "max_iterations = 1")
    make_bot("isolated", BREAK_AND_TEST, f"max_iterations = 1\n{SETUP}")

    # Without a setup step the user's editable install would answer `import mypkg` from the user's checkout;
    # openbot points the bot's PYTHONPATH at the same directory of its own checkout: the break is seen.
    assert run_cli("run", "plain", cwd=repo, env=env).returncode == 0
    assert "broken in the worktree" in str(commands("plain")[-1]["output"])

    out = run_cli("run", "isolated", "--json", cwd=repo, env=env)
    assert out.returncode == 0, out.stderr
    setup, *_, test = commands("isolated")
    assert setup["tool_use_id"] == "setup-1" and setup["exit_code"] == 0
    assert test["exit_code"] != 0 and "broken in the worktree" in str(test["output"])
    assert (repo / "src" / "mypkg" / "__init__.py").read_text() == "def answer():\n    return 42\n"
    branch = json.loads(out.stdout)["branch"]
    tracked = git(repo, "ls-tree", "-r", "--name-only", branch).splitlines()
    assert not [p for p in tracked if p.startswith(".venv/")]  # the setup's venv is never committed


def test_a_failing_setup_ends_the_run_with_exit_1_and_keeps_the_bots_work(tmp_path: Path) -> None:
    repo = python_project(tmp_path / "repo")
    work = [reply("", shell("echo kept > kept.txt && git add kept.txt && git commit -qm kept"))]
    bot = make_bot("fails", [*work, reply("paused")], "max_iterations = 1")
    first = run_cli("run", "fails", "--json", cwd=repo)
    assert first.returncode == 3, first.stderr  # stopped by max_iterations with one commit made
    run_id = json.loads(first.stdout)["run_id"]
    config = (bot / "config.md").read_text()
    (bot / "config.md").write_text(
        config.replace("+++\n\n", 'setup = ["true", "echo boom; exit 7"]\n+++\n\n')
    )

    out = run_cli("run", "fails", "--resume", run_id, "--json", cwd=repo)
    assert out.returncode == 1, out.stderr
    result = json.loads(out.stdout)
    assert result["status"] == "failed" and "setup command 2 of 2 exited with 7" in result["reason"]
    assert "setup command 2 of 2 exited with 7" in out.stderr and "Traceback" not in out.stderr
    failed = commands("fails")[-1]
    assert failed["tool_use_id"] == "setup-2" and "boom" in str(failed["output"])
    assert git(repo, "show", f"{result['branch']}:kept.txt") == "kept"


def test_the_setup_cache_survives_runs_and_only_the_setup_may_write_it(repo: Path) -> None:
    count = 'echo run >> "$PIP_CACHE_DIR/runs" && wc -l < "$PIP_CACHE_DIR/runs"'
    caches = paths.bot_home("cached") / "workspaces"  # one cache per repository: workspaces/<project>/cache
    poison = reply("", shell(f"for f in {caches}/*/cache/pip/runs; do echo poisoned >> $f; done"))
    make_bot("cached", [poison, reply("", complete())], f"max_iterations = 1\nsetup = ['{count}']")
    for _ in range(2):
        assert run_cli("run", "cached", cwd=repo).returncode == 0
    [cache] = caches.glob("*/cache/pip")
    setup_runs = [c for c in commands("cached") if c["tool_use_id"] == "setup-1"]
    assert [str(c["output"]).strip() for c in setup_runs] == ["1", "2"]
    agents = [c for c in commands("cached") if c["tool_use_id"] != "setup-1"]
    assert all(c["exit_code"] != 0 for c in agents)  # the agent's commands cannot write the cache
    assert "poisoned" not in (cache / "runs").read_text()


def test_the_bots_own_git_add_all_leaves_out_what_the_setup_made(tmp_path: Path) -> None:
    repo = python_project(tmp_path / "repo")
    setup = SETUP.replace("]", ', "mkdir -p src/mypkg.egg-info && echo meta > src/mypkg.egg-info/PKG-INFO"]')
    work = shell("echo change >> README.md && git add -A && git commit -qm all && git status --short")
    make_bot("adder", [reply("", work), reply("", complete())], f"max_iterations = 1\n{setup}")
    out = run_cli("run", "adder", "--json", cwd=repo)
    assert out.returncode == 0, out.stderr
    ran = commands("adder")[-1]
    assert ran["exit_code"] == 0 and str(ran["output"]).strip() == "", ran["output"]  # ignored, not pending
    branch = json.loads(out.stdout)["branch"]
    assert git(repo, "log", "-1", "--format=%s", branch) == "all"
    tracked = git(repo, "ls-tree", "-r", "--name-only", branch).splitlines()
    assert "README.md" in tracked and not [p for p in tracked if p.startswith(".venv/") or ".egg-info" in p]
    assert not (repo / ".git" / "info" / "exclude").read_text().count("openbot")  # the user's is untouched


def test_the_pre_commit_environments_the_setup_installs_serve_the_agents_hooks(repo: Path) -> None:
    # Stand-in for `pre-commit install-hooks` (setup) and a pre-commit hook using what it installed.
    install = 'setup = [\'mkdir -p "$PRE_COMMIT_HOME/repo1" && echo ready > "$PRE_COMMIT_HOME/repo1/env"\']'
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text(
        '#!/bin/sh\ncat "$PRE_COMMIT_HOME/repo1/env" || exit 1\n'
        '(echo x >> "$PRE_COMMIT_HOME/repo1/env") 2>/dev/null && echo writable || echo read-only\n'
    )
    os.chmod(hook, 0o755)
    commit = shell("echo a > a.txt && git add a.txt && git commit -qm a")
    make_bot("hooks", [reply("", commit), reply("", complete())], f"max_iterations = 1\n{install}")
    out = run_cli("run", "hooks", "--json", cwd=repo)
    assert out.returncode == 0, out.stderr
    ran = commands("hooks")[-1]
    assert ran["exit_code"] == 0 and str(ran["output"]).split() == ["ready", "read-only"], ran["output"]
    assert git(repo, "log", "-1", "--format=%s", json.loads(out.stdout)["branch"]) == "a"
