"""`openbot memory <bot> show|set|remove|clear` on a temp OPENBOT_HOME and real git repos."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from openbot import paths
from openbot.state.memory import MemoryStore
from openbot.state.project import resolve_project
from tests.helpers import git, make_repo


def make_bot(name: str = "fixer", root: Path | None = None) -> Path:
    """A bot in OPENBOT_HOME, or committed in `root`/.openbot/bots when root is given."""
    bot_dir = (paths.repo_bots_dir(root) if root else paths.bots_dir()) / name
    bot_dir.mkdir(parents=True)
    (bot_dir / "config.md").write_text('+++\ndescription = "test bot"\n+++\nFix things.\n')
    return bot_dir


@pytest.fixture(autouse=True)
def bot() -> Path:
    return make_bot()


def memory_of(repo: Path, bot: str = "fixer") -> MemoryStore:
    return MemoryStore(paths.memory_file(bot, resolve_project(repo).slug))


def test_set_show_remove_clear(cli, repo: Path) -> None:
    slug = resolve_project(repo).slug
    r = cli("memory", "fixer", "show", cwd=repo)
    assert r.exit_code == 0 and r.stdout.strip() == f"no memory for fixer in {slug}"

    assert cli("memory", "fixer", "set", "build", "make -j4").exit_code == 0
    assert cli("memory", "fixer", "set", "style", "black, 110 cols").exit_code == 0
    r = cli("memory", "fixer", "show")
    assert r.exit_code == 0 and r.stdout.splitlines() == ["build: make -j4", "style: black, 110 cols"]
    # The memory the CLI wrote is the one a run in this repo reads.
    assert memory_of(repo).load() == {"build": "make -j4", "style": "black, 110 cols"}

    doc = json.loads(cli("memory", "fixer", "show", "--json").stdout)
    assert doc["project"] == slug and doc["entries"]["build"] == "make -j4"
    assert doc["path"] == str(paths.memory_file("fixer", slug))

    r = cli("memory", "fixer", "remove", "build")
    assert r.exit_code == 0 and memory_of(repo).load() == {"style": "black, 110 cols"}
    r = cli("memory", "fixer", "clear")  # no terminal to ask on, no --yes: nothing is deleted
    assert r.exit_code == 2 and "memory clear would delete all 1 entry" in r.stderr and "--yes" in r.stderr
    assert memory_of(repo).load() == {"style": "black, 110 cols"}
    r = cli("memory", "fixer", "clear", "--yes")
    assert r.exit_code == 0 and "removed 1 entry" in r.stdout and "a copy is in" in r.stdout
    assert memory_of(repo).load() == {}
    (backup,) = memory_of(repo).path.parent.glob("memory.json.bak-*")
    assert json.loads(backup.read_text())["entries"] == {"style": "black, 110 cols"}


def test_remove_of_a_missing_key_exits_2_naming_it(cli, repo: Path) -> None:
    cli("memory", "fixer", "set", "build", "make", cwd=repo)
    r = cli("memory", "fixer", "remove", "biuld")
    assert r.exit_code == 2
    assert "no memory key 'biuld'" in r.stderr and "build" in r.stderr


def test_unknown_bot_exits_2_with_a_suggestion(cli, repo: Path) -> None:
    r = cli("memory", "fixr", "show", cwd=repo)
    assert r.exit_code == 2
    assert "no bot named 'fixr'" in r.stderr and "did you mean 'fixer'" in r.stderr
    assert not (paths.bots_dir() / "fixr").exists()


def test_repo_committed_bot_is_found(cli, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app")
    make_bot("reviewer", root=repo)
    r = cli("memory", "reviewer", "set", "k", "v", cwd=repo)
    assert r.exit_code == 0, r.stderr
    assert memory_of(repo, "reviewer").load() == {"k": "v"}
    assert cli("memory", "reviewer", "show", cwd=tmp_path).exit_code == 2  # not visible outside the repo


def test_linked_worktree_sees_the_same_memory(cli, repo: Path, tmp_path: Path) -> None:
    cli("memory", "fixer", "set", "k", "from main", cwd=repo)
    git(repo, "worktree", "add", "-q", "-b", "side", str(tmp_path / "wt"))
    r = cli("memory", "fixer", "show", cwd=tmp_path / "wt")
    assert r.exit_code == 0 and r.stdout.strip() == "k: from main"


def test_two_repos_named_app_keep_separate_memory(cli, tmp_path: Path) -> None:
    a, b = make_repo(tmp_path / "a" / "app"), make_repo(tmp_path / "b" / "app")
    cli("memory", "fixer", "set", "k", "A", cwd=a)
    r = cli("memory", "fixer", "show", cwd=b)
    assert r.exit_code == 0 and r.stdout.startswith("no memory for fixer in app-")


def test_project_override_before_or_after_the_subcommand(cli, repo: Path) -> None:
    assert cli("memory", "--project", "other-1", "fixer", "set", "k", "v", cwd=repo).exit_code == 0
    assert MemoryStore(paths.memory_file("fixer", "other-1")).load() == {"k": "v"}
    assert cli("memory", "fixer", "show", "--project", "other-1").stdout.strip() == "k: v"
    assert cli("memory", "fixer", "show").stdout.startswith("no memory")
    # Bug fixed: between the bot and the subcommand it failed with "No such command '--project'".
    r = cli("memory", "fixer", "--project", "other-1", "show")
    assert r.exit_code == 0 and r.stdout.strip() == "k: v"
    assert cli("memory", "fixer", "--project=other-1", "set", "j", "w").exit_code == 0
    assert MemoryStore(paths.memory_file("fixer", "other-1")).load() == {"k": "v", "j": "w"}
    # The subcommand's own --project wins over the group's.
    r = cli("memory", "fixer", "--project", "other-1", "show", "--project", "other-2")
    assert r.exit_code == 0 and r.stdout.startswith("no memory for fixer in other-2")


@pytest.mark.parametrize(
    "args", [("ghost", "show", "--help"), ("fixer", "set", "--help"), ("x", "clear", "-h")]
)
def test_subcommand_help_works_for_any_bot(cli, repo: Path, args: tuple[str, ...]) -> None:
    # Bug fixed: the group callback looked the bot up before the subcommand could show its help.
    r = cli("memory", *args, cwd=repo)
    assert r.exit_code == 0 and "Usage:" in r.stdout and "--project" in r.stdout


def test_unknown_bot_is_still_an_error_with_project_between(cli, repo: Path) -> None:
    r = cli("memory", "ghost", "--project", "p", "show", cwd=repo)
    assert r.exit_code == 2 and "no bot named 'ghost'" in r.stderr
    assert not (paths.bot_home("ghost")).exists()


@pytest.mark.parametrize(
    "args",
    [
        ("memory", "--project", "../escape", "fixer", "show"),
        ("memory", "fixer", "show", "--project", "a/b"),
        ("memory", "fixer", "set", "k", "v", "--project", ".."),
        ("memory", "fixer", "--project", "a b", "show"),
    ],
)
def test_bad_project_exits_2(cli, repo: Path, args: tuple[str, ...]) -> None:
    r = cli(*args, cwd=repo)
    assert r.exit_code == 2 and "invalid project" in r.stderr
    assert not (paths.bot_home("fixer") / "workspaces").exists()


def test_bad_key_exits_2(cli, repo: Path) -> None:
    r = cli("memory", "fixer", "set", "two\nlines", "v", cwd=repo)
    assert r.exit_code == 2 and "newline" in r.stderr


def test_damaged_memory_is_refused_untouched_until_repair(cli, repo: Path) -> None:
    store = memory_of(repo)
    store.path.parent.mkdir(parents=True)
    store.path.write_text('{"entries": {"k": 1}}')
    for args in (("show",), ("set", "a", "b"), ("remove", "k"), ("clear",)):
        r = cli("memory", "fixer", *args, cwd=repo)
        assert r.exit_code == 2, args
        assert str(store.path) in r.stderr and "--repair" in r.stderr
        assert store.path.read_text() == '{"entries": {"k": 1}}'
    r = cli("memory", "fixer", "clear", "--repair")
    assert r.exit_code == 0 and "moved the damaged memory file" in r.stdout
    (moved,) = store.path.parent.glob("memory.json.corrupt-*")
    assert moved.read_text() == '{"entries": {"k": 1}}' and not store.path.exists()
    assert cli("memory", "fixer", "set", "a", "b").exit_code == 0
    assert cli("memory", "fixer", "clear", "--repair", "-y").stdout.startswith("removed 1 entry")


def test_memory_in_a_real_subprocess(repo: Path, openbot_home: Path) -> None:
    env = {**os.environ, "OPENBOT_HOME": str(openbot_home)}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        cmd = [sys.executable, "-m", "openbot", "memory", *args]
        return subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True, timeout=60)

    assert run("fixer", "set", "tests", "pytest -q").returncode == 0
    shown = run("fixer", "show")
    assert shown.returncode == 0 and shown.stdout == "tests: pytest -q\n"
    missing = run("fixer", "remove", "nope")
    assert missing.returncode == 2 and missing.stderr.startswith("openbot: error: no memory key 'nope'")
    assert "Traceback" not in missing.stderr


def test_memory_and_history_outside_a_repository_need_a_project(cli, tmp_path: Path) -> None:
    outside = tmp_path / "not-a-repo"
    outside.mkdir()
    for args in (("memory", "fixer", "show"), ("history", "fixer")):
        r = cli(*args, cwd=outside)
        assert r.exit_code == 2 and "is not in a git repository" in r.stderr and "--project" in r.stderr, args
    assert cli("memory", "fixer", "--project", "mine", "set", "k", "v", cwd=outside).exit_code == 0
    assert cli("memory", "fixer", "--project", "mine", "show", cwd=outside).stdout.strip() == "k: v"
