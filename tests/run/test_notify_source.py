"""A `[[notify]]` command runs outside the sandbox, so it takes its code only from what the user controls:
the agent edits the repository's notify script and merges it (or just edits it under `--no-worktree`);
the script that runs is the one in the commit the run started from, in a private directory, with a
minimal environment. Real runs, as root and as `nobody`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import complete, git, make_bot, make_repo, remove_tree, reply, run_cli, shell
from tests.run.test_repo_attacks import DROP, python_for_nobody

CANARY = "canary-of-the-users-environment-51c2"
KEY = "sk-ant-test-NOTIFY-0123456789abcdef"


@pytest.fixture(params=["root", "nobody"])
def top(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A directory for the repository and the output, and OPENBOT_HOME/HOME, owned by whoever runs."""
    if request.param == "nobody" and (os.geteuid() != 0 or shutil.which("setpriv") is None):
        pytest.skip("dropping to nobody needs root and setpriv")
    base = Path(tempfile.mkdtemp(prefix="openbot-notify-test-"))  # tmp_path's parents are root-only
    base.chmod(0o755)
    monkeypatch.setenv("OPENBOT_HOME", str(base / "openbot-home"))
    monkeypatch.setenv("HOME", str(base / "home"))
    for key, value in {"COUNT": "1", "KEY_0": "safe.directory", "VALUE_0": "*"}.items():
        monkeypatch.setenv(f"GIT_CONFIG_{key}", value)  # root's git reads the other user's repository
    (base / "home").mkdir()
    (base / "out").mkdir()
    try:
        yield base
    finally:
        remove_tree(base)  # the run's detached rm may still be emptying its trash there


def script(top: Path, who: str) -> str:
    out = top / "out"
    return f'#!/bin/sh\n{{ echo {who}; pwd; env; }} > "{out}/{who}.txt"\ncat > "{out}/{who}.json"\n'


def setup(top: Path, nobody: bool) -> Path:
    repo = make_repo(top / "repo")
    (repo / "tools").mkdir()
    page = repo / "tools" / "page-me.sh"
    page.write_text(script(top, "base"))
    page.chmod(0o755)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the user's notify script")
    edit = {"command": "create", "path": "tools/page-me.sh", "file_text": script(top, "agent")}
    notify = '[[notify]]\ncommand = ["./tools/page-me.sh"]\nenv = ["PAGER_TOKEN"]'
    config = f"sleep_secs = 0\nmerge_unverified = true  # the merge itself is the attack\n{notify}"
    commit = shell("git commit -qam 'page me differently'")
    steps = [reply("", {"name": "edit", "input": edit}, commit), reply("", complete("done", "merge"))]
    make_bot("pager", steps, config)
    if nobody:
        subprocess.run(["chown", "-R", "65534:65534", str(top)], check=True)
    return repo


def run(top: Path, repo: Path, nobody: bool, *flags: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PAGER_TOKEN": "tok-1", "OPENBOT_CANARY": CANARY, "ANTHROPIC_API_KEY": KEY}
    python = sys.executable
    if nobody:  # an interpreter nobody can run, also inside the sandbox (the agent commits)
        python, env["PYTHONPATH"] = python_for_nobody()
    argv = [*(DROP if nobody else []), python, "-m", "openbot", "run", "pager", "--json", *flags]
    return subprocess.run(
        argv,
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def assert_the_users_script_ran(top: Path, repo: Path) -> None:
    out = top / "out"
    assert not (out / "agent.txt").exists(), (out / "agent.txt").read_text()
    said = (out / "base.txt").read_text().splitlines()
    assert said[0] == "base"
    cwd = said[1]
    assert not cwd.startswith(str(repo)) and os.path.basename(cwd).startswith("openbot-notify-")
    env = dict(line.split("=", 1) for line in said[2:] if "=" in line)
    assert env["PAGER_TOKEN"] == "tok-1" and env["HOME"] == os.environ["HOME"]
    assert CANARY not in "\n".join(said) and KEY not in "\n".join(said)
    assert "OPENBOT_HOME" not in env and "ANTHROPIC_API_KEY" not in env
    assert json.loads((out / "base.json").read_text())["bot"] == "pager"
    assert not os.path.exists(cwd)  # the private directory is gone


def test_a_notify_script_the_agent_merged_is_not_what_runs(top: Path, request: pytest.FixtureRequest) -> None:
    nobody = request.node.callspec.params["top"] == "nobody"
    repo = setup(top, nobody)
    out = run(top, repo, nobody)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["action"] == "merge"
    assert "agent" in (repo / "tools" / "page-me.sh").read_text()  # the agent's script is in the checkout
    assert "· notified notify[1]" in out.stderr
    assert_the_users_script_ran(top, repo)


def test_a_notify_script_edited_in_the_checkout_under_no_worktree_is_not_what_runs(
    top: Path, request: pytest.FixtureRequest
) -> None:
    nobody = request.node.callspec.params["top"] == "nobody"
    repo = setup(top, nobody)
    out = run(top, repo, nobody, "--no-worktree")
    assert out.returncode == 0, out.stderr
    assert "agent" in (repo / "tools" / "page-me.sh").read_text()
    assert_the_users_script_ran(top, repo)


def test_a_notify_command_can_never_be_given_a_model_key(repo: Path) -> None:
    for entry, key in (("ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY"), ("OPENAI_*", "OPENAI_ADMIN_KEY")):
        config = f'sleep_secs = 0\n[[notify]]\ncommand = ["true"]\nenv = ["{entry}"]'
        make_bot("keyed", [reply("", complete())], config)
        out = run_cli("run", "keyed", cwd=repo)
        assert out.returncode == 2, out.stderr
        assert f"key 'notify[1].env' entry '{entry}' would pass {key}, a model key" in out.stderr
        assert "Traceback" not in out.stderr
    config = 'sleep_secs = 0\napi_key_env = "MY_LLM_TOKEN"\n[[notify]]\ncommand = ["true"]\nenv = ["MY_*"]'
    make_bot("keyed", [reply("", complete())], config)
    out = run_cli("run", "keyed", cwd=repo)
    assert out.returncode == 2 and "would pass MY_LLM_TOKEN, a model key" in out.stderr


def test_a_repository_command_that_is_a_link_or_missing_at_base_is_not_run(
    repo: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    outside = tmp_path / "outside.sh"
    outside.write_text(f"#!/bin/sh\ntouch {marker}\n")
    outside.chmod(0o755)
    (repo / "notify.sh").symlink_to(outside)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a link")
    config = (
        'sleep_secs = 0\n[[notify]]\ncommand = ["./notify.sh"]\n[[notify]]\ncommand = ["tools/absent.sh"]'
    )
    make_bot("linked", [reply("", complete())], config)
    out = run_cli("run", "linked", cwd=repo)
    assert out.returncode == 0, out.stderr
    assert not marker.exists()
    assert "could not notify notify[1] (command ./notify.sh): not run: notify.sh is not a file" in out.stderr
    assert "notify[2] (command tools/absent.sh): not run: tools/absent.sh is not a file" in out.stderr
