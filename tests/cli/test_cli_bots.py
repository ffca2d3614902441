"""`openbot bots list|create|show|delete|examples` on a temp OPENBOT_HOME and real git repos."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from openbot import paths
from openbot.config.botconfig import load_bot_file
from tests.helpers import git, make_repo


def commit_bot(repo: Path, name: str, text: str) -> Path:
    path = repo / ".openbot" / "bots" / name / "config.md"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", f"add {name}")
    return path


@pytest.fixture
def examples(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "shipped-bots"
    (root / "hello").mkdir(parents=True)
    (root / "hello" / "config.md").write_text('+++\ndescription = "Says hello"\n+++\nHello.\n')
    monkeypatch.setattr(paths, "SHIPPED_BOTS", root)
    return root


def test_list_empty(cli, tmp_path: Path) -> None:
    r = cli("bots", "list", cwd=tmp_path)
    assert r.exit_code == 0 and "no bots yet" in r.stdout


def test_list_home_and_repo_bots_with_shadowing_and_invalid(cli, repo: Path) -> None:
    cli("bots", "create", "ci", "-d", "Home CI")
    cli("bots", "create", "solo", "-d", "Solo bot")
    commit_bot(repo, "ci", '+++\ndescription = "Repo CI"\nmodel = "scripted:s.json"\n+++\nReview.\n')
    commit_bot(repo, "broken", "+++\nmax_iteratons = 3\n+++\n")
    r = cli("bots", "list", "--json", cwd=repo / ".openbot")  # a subdirectory of the checkout
    assert r.exit_code == 0, r.output
    rows = {(row["name"], row["source"]): row for row in json.loads(r.stdout)}
    assert set(rows) == {("broken", "repo"), ("ci", "home"), ("ci", "repo"), ("solo", "home")}
    assert rows[("ci", "home")]["shadowed"] is False and rows[("ci", "repo")]["shadowed"] is True
    assert rows[("ci", "repo")]["model"] == "scripted:s.json"
    assert "unknown key 'max_iteratons'" in rows[("broken", "repo")]["error"]
    text = cli("bots", "list").stdout
    assert "invalid: " in text and "shadowed" in text and "Solo bot" in text


def test_list_from_linked_worktree_sees_its_committed_bots(cli, repo: Path, tmp_path: Path) -> None:
    git(repo, "switch", "-q", "-c", "feature")
    commit_bot(repo, "wt-bot", "Work.\n")
    git(repo, "switch", "-q", "main")
    git(repo, "worktree", "add", "-q", str(tmp_path / "wt"), "feature")
    names = [row["name"] for row in json.loads(cli("bots", "list", "--json", cwd=tmp_path / "wt").stdout)]
    assert names == ["wt-bot"]
    assert json.loads(cli("bots", "list", "--json", cwd=repo).stdout) == []


def test_list_in_real_subprocess(repo: Path, openbot_home: Path) -> None:
    commit_bot(repo, "ci", '+++\ndescription = "Repo CI"\n+++\nReview.\n')
    env = {**os.environ, "OPENBOT_HOME": str(openbot_home)}
    out = subprocess.run(
        [sys.executable, "-m", "openbot", "bots", "list"], cwd=repo, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert "ci" in out.stdout and "repo" in out.stdout and "Repo CI" in out.stdout


def test_create_and_show(cli, openbot_home: Path) -> None:
    r = cli("bots", "create", "fixer", "-d", "Fixes bugs", "-p", "Fix the failing test.")
    assert r.exit_code == 0, r.output
    path = openbot_home / "bots" / "fixer" / "config.md"
    assert str(path) in r.stdout
    r = cli("bots", "show", "fixer")
    assert r.exit_code == 0
    assert f"path: {path}" in r.stdout and "source: home" in r.stdout
    # the columns are as wide as the longest key: a new key may widen them
    assert re.search(
        r'description += "Fixes bugs" +config.md  # One line shown by `openbot bots list`.', r.stdout
    )
    # Bug fixed: the README promised each key's meaning, but show printed only values.
    assert re.search(r"max_iterations += 10 +default    # Iterations \(sessions\) per run;", r.stdout)
    assert re.search(r"\n  network += false ", r.stdout)
    assert r.stdout.rstrip().endswith("instructions:\nFix the failing test.")
    doc = json.loads(cli("bots", "show", "fixer", "--json").stdout)
    assert doc["config"]["max_turn_steps"] == 100 and doc["set_in_file"] == ["description"]
    assert doc["docs"]["sandbox"] == "What the agent's commands may touch."
    assert set(doc["config"]) >= {"model", "sandbox", "shipped_skills"}


def test_create_existing_needs_force(cli) -> None:
    cli("bots", "create", "fixer", "-p", "one")
    r = cli("bots", "create", "fixer", "-p", "two")
    assert r.exit_code == 2 and "--force" in r.stderr and "already exists" in r.stderr
    assert cli("bots", "create", "fixer", "-p", "two", "--force").exit_code == 0
    assert load_bot_file(paths.bot_home("fixer") / "config.md").instructions == "two"


def test_create_bad_name(cli, openbot_home: Path) -> None:
    r = cli("bots", "create", "../evil")
    assert r.exit_code == 2 and "invalid bot name" in r.stderr
    assert not (openbot_home.parent / "evil").exists()


def test_create_from_example_and_unknown_example(cli, examples: Path) -> None:
    r = cli("bots", "create", "mine", "--from", "hello")
    assert r.exit_code == 0, r.output
    assert load_bot_file(paths.bot_home("mine") / "config.md").config.description == "Says hello"
    r = cli("bots", "create", "other", "--from", "helo")
    assert r.exit_code == 2 and "no shipped example bot named 'helo'" in r.stderr and "hello" in r.stderr


def test_examples(cli, examples: Path) -> None:
    r = cli("bots", "examples")
    assert r.exit_code == 0 and r.stdout.split() == ["hello", "Says", "hello"]


def test_examples_none_shipped(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(paths, "SHIPPED_BOTS", tmp_path / "none")
    r = cli("bots", "examples")
    assert r.exit_code == 0 and "no example bots" in r.stdout


def test_show_unknown_and_invalid(cli, repo: Path) -> None:
    cli("bots", "create", "fixer")
    r = cli("bots", "show", "fixr", cwd=repo)
    assert r.exit_code == 2 and "did you mean 'fixer'" in r.stderr
    commit_bot(repo, "broken", "+++\nsandbox = 'open'\n+++\n")
    r = cli("bots", "show", "broken")
    assert r.exit_code == 2 and "'sandbox'" in r.stderr and "workspace-write" in r.stderr


def test_delete_needs_yes_without_tty(cli, openbot_home: Path) -> None:
    cli("bots", "create", "gone")
    memory = paths.memory_file("gone", "proj")
    memory.parent.mkdir(parents=True)
    memory.write_text("{}")
    r = cli("bots", "delete", "gone")
    assert r.exit_code == 2 and "--yes" in r.stderr
    assert memory.is_file()
    r = cli("bots", "delete", "gone", "--yes")
    assert r.exit_code == 0 and not paths.bot_home("gone").exists()


def test_delete_refuses_repo_bot(cli, repo: Path) -> None:
    path = commit_bot(repo, "ci", "Review.\n")
    r = cli("bots", "delete", "ci", "--yes", cwd=repo)
    assert r.exit_code == 2 and "committed in the repository" in r.stderr and path.is_file()


def test_delete_home_bot_shadowed_by_repo_bot(cli, repo: Path) -> None:
    cli("bots", "create", "ci", cwd=repo)
    committed = commit_bot(repo, "ci", "Review.\n")
    r = cli("bots", "delete", "ci")  # the home bot is the one `ci` names; still asks first
    assert r.exit_code == 2 and "--yes" in r.stderr and paths.bot_home("ci").is_dir()
    r = cli("bots", "delete", "ci", "--yes")
    assert r.exit_code == 0 and f"deleted {paths.bot_home('ci')}" in r.stdout
    assert not paths.bot_home("ci").exists() and committed.is_file()


@pytest.mark.parametrize(
    ("line", "key"),
    [('env_passthrough = ["*"]', "env_passthrough"), ('shipped_skills = ["nope"]', "shipped_skills")],
)
def test_values_that_failed_mid_run_are_reported_by_show_and_list(
    cli, tmp_path: Path, line: str, key: str
) -> None:
    config = paths.bot_home("b") / "config.md"
    config.parent.mkdir(parents=True)
    config.write_text(f"+++\n{line}\n+++\nGo.\n")
    r = cli("bots", "show", "b", cwd=tmp_path)
    assert r.exit_code == 2 and str(config) in r.stderr and f"key '{key}'" in r.stderr
    (row,) = json.loads(cli("bots", "list", "--json").stdout)
    assert f"key '{key}'" in row["error"]


def test_delete_unknown(cli) -> None:
    r = cli("bots", "delete", "ghost", "--yes")
    assert r.exit_code == 2 and "no bot named 'ghost'" in r.stderr


def test_other_repo_bots_are_invisible(cli, tmp_path: Path) -> None:
    other = make_repo(tmp_path / "other")
    commit_bot(other, "theirs", "x\n")
    assert json.loads(cli("bots", "list", "--json", cwd=tmp_path).stdout) == []


def test_delete_refuses_a_running_bot(cli, repo: Path) -> None:
    # Bug fixed: `bots delete --yes` removed the directory of a running bot; the run crashed with a traceback.
    import signal
    import time

    from tests.helpers import make_bot, reply, shell

    bot_dir = make_bot("busy", [reply("", shell("sleep 30"))])
    proc = subprocess.Popen(
        [sys.executable, "-m", "openbot", "run", "busy"],
        cwd=repo,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not list((bot_dir / "workspaces").glob("*/runs/*/run.json")) and time.monotonic() < deadline:
            time.sleep(0.05)
        (record,) = (bot_dir / "workspaces").glob("*/runs/*/run.json")
        for args in (["--yes"], []):  # refused before the confirmation question too
            r = cli("bots", "delete", "busy", *args, cwd=repo)
            assert r.exit_code == 2, r.output
            assert f"run {record.parent.name}, pid {proc.pid}" in r.stderr and "stop it first" in r.stderr
        assert (bot_dir / "config.md").is_file()
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 143 and "Traceback" not in err
    r = cli("bots", "delete", "busy", "--yes", cwd=repo)
    assert r.exit_code == 0 and not bot_dir.exists()
