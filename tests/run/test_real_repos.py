"""Real repositories through the real CLI: the repository's own hooks run on the bot's commits inside the
sandbox (a failing hook is the bot's to see); clean filters apply to the bot's commits and the WIP
commit; LFS files left uncommitted are committed as pointers with their objects in the user's store."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.helpers import complete, events, git, make_bot, reply, run_cli, sessions, shell

# Like pre-commit: it refuses a file with a marker in it (and, in the $HOME variant, keeps its
# environments under $HOME/.cache, as pre-commit does).
HOOK = """#!/bin/sh
if git diff --cached --name-only | xargs -r grep -l FORBIDDEN; then
  echo "fake-pre-commit: FORBIDDEN found" >&2
  exit 1
fi
echo "fake-pre-commit: passed"
"""
NEEDS_HOME = (
    'mkdir -p "$HOME/.cache/fake-pre-commit" && echo seen >> "$HOME/.cache/fake-pre-commit/runs" || exit 9\n'
)


def install_hook(repo: Path, needs_home: bool = False) -> None:
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text(HOOK.replace("\nif ", f"\n{NEEDS_HOME}if ", 1) if needs_home else HOOK)
    os.chmod(hook, 0o755)


def commands(bot: str) -> list[dict[str, object]]:
    return [e for s in sessions(bot) for e in events(s) if e["type"] == "command"]


def test_the_repositorys_pre_commit_hook_runs_on_the_bots_commit(repo: Path) -> None:
    install_hook(repo)
    commit = shell("echo fine > ok.txt && git add ok.txt && git commit -m ok")
    make_bot("hooked", [reply("", commit), reply("", complete())], "max_iterations = 1")
    out = run_cli("run", "hooked", "--json", cwd=repo)
    assert out.returncode == 0, out.stderr
    (ran,) = commands("hooked")
    assert ran["exit_code"] == 0 and "fake-pre-commit: passed" in str(ran["output"]), ran["output"]
    result = json.loads(out.stdout)
    assert git(repo, "log", "-1", "--format=%s", result["branch"]) == "ok"  # the bot's commit, not a WIP


def test_a_failing_hook_is_visible_in_the_bots_command_output(repo: Path) -> None:
    install_hook(repo)
    commit = shell("echo FORBIDDEN > bad.txt && git add bad.txt && git commit -m bad")
    make_bot("blocked", [reply("", commit), reply("", complete())], "max_iterations = 1")
    out = run_cli("run", "blocked", "--json", cwd=repo)
    assert out.returncode == 0, out.stderr
    (ran,) = commands("blocked")
    assert ran["exit_code"] != 0 and "fake-pre-commit: FORBIDDEN found" in str(ran["output"])


def rot13_repo(repo: Path) -> None:
    """A git-crypt-like clean filter, configured in the user's repository config (never the agent's)."""
    git(repo, "config", "filter.rot.clean", "tr a-z n-za-m")
    git(repo, "config", "filter.rot.smudge", "tr a-z n-za-m")
    git(repo, "config", "filter.rot.required", "true")
    (repo / ".gitattributes").write_text("*.secret filter=rot\n")
    git(repo, "add", ".gitattributes")
    git(repo, "commit", "-qm", "encrypt *.secret")


def test_clean_filters_apply_to_the_bots_commit_and_to_the_wip_commit(repo: Path) -> None:
    rot13_repo(repo)
    commit = shell("echo hello > a.secret && git add a.secret && git commit -qm a && echo world > b.secret")
    make_bot("filtered", [reply("", commit), reply("", complete())], "max_iterations = 1")
    out = run_cli("run", "filtered", "--json", cwd=repo)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["wip_commits"], out.stderr
    branch = result["branch"]
    assert git(repo, "cat-file", "-p", f"{branch}~1:a.secret") == "uryyb"  # the bot's own commit
    assert git(repo, "cat-file", "-p", f"{branch}:b.secret") == "jbeyq"  # the WIP commit, filtered too


@pytest.mark.skipif(shutil.which("git-lfs") is None, reason="git-lfs is not installed (.ci/run installs it)")
def test_lfs_files_left_uncommitted_are_wip_committed_as_pointers(repo: Path) -> None:
    git(repo, "lfs", "install", "--local")
    git(repo, "lfs", "track", "*.bin")
    (repo / "old.bin").write_bytes(b"\x00old binary\x00" * 100)
    git(repo, "add", ".gitattributes", "old.bin")
    git(repo, "commit", "-qm", "lfs")
    work = shell("head -c 5000 /dev/zero | tr '\\0' x > new.bin && git status --short")
    make_bot("lfs", [reply("", work), reply("", complete())], "max_iterations = 1")
    out = run_cli("run", "lfs", "--json", cwd=repo)
    assert out.returncode == 0, out.stderr
    (ran,) = commands("lfs")
    assert ran["exit_code"] == 0, ran["output"]  # git status works in the bot's checkout
    branch = json.loads(out.stdout)["branch"]
    pointer = git(repo, "cat-file", "-p", f"{branch}:new.bin")
    assert pointer.startswith("version https://git-lfs.github.com/spec/v1"), pointer
    oid = pointer.split("oid sha256:")[1].split()[0]
    assert (repo / ".git" / "lfs" / "objects" / oid[:2] / oid[2:4] / oid).read_bytes() == b"x" * 5000


def test_a_hook_that_writes_its_cache_under_home_passes_in_the_sandbox(repo: Path) -> None:
    install_hook(repo, needs_home=True)
    commit = shell("echo fine > ok.txt && git add ok.txt && git commit -m ok")
    make_bot("cachehook", [reply("", commit), reply("", complete())], "max_iterations = 1")
    assert run_cli("run", "cachehook", cwd=repo).returncode == 0
    (ran,) = commands("cachehook")
    assert ran["exit_code"] == 0 and "fake-pre-commit: passed" in str(ran["output"]), ran["output"]
