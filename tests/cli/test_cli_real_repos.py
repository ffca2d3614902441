"""What a new user meets on real repositories, through the real CLI: a bot moved into a repository, a
dirty or mid-rebase checkout, an orphan branch, an example's name, output piped to `head`, `--help`."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from openbot import paths
from tests.helpers import complete, git, make_bot, reply, run_cli


def test_a_bot_created_from_the_demo_still_runs_once_committed_into_a_repository(repo: Path) -> None:
    assert run_cli("bots", "create", "greeter", "--from", "demo", cwd=repo).returncode == 0
    config = (paths.bot_home("greeter") / "config.md").read_text()
    assert 'model = "scripted:script.json"' in config  # relative to the bot's directory, not absolute
    shutil.move(paths.bot_home("greeter"), repo / ".openbot" / "bots" / "greeter")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the greeter bot")
    assert run_cli("trust", "greeter", cwd=repo).returncode == 0
    out = run_cli("run", "greeter", "--json", cwd=repo)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["action"] == "review"


def _quick_bot() -> None:
    make_bot("quick", [reply("", complete("nothing to do"))], "max_iterations = 1")


def test_a_dirty_checkout_gets_a_one_line_notice(repo: Path) -> None:
    _quick_bot()
    (repo / "README.md").write_text("edited, not committed\n")
    out = run_cli("run", "quick", cwd=repo)
    assert out.returncode == 0, out.stderr
    notices = [line for line in out.stderr.splitlines() if "uncommitted changes" in line]
    assert len(notices) == 1 and "--with-changes" in notices[0]
    clean = run_cli("run", "quick", cwd=make_clean(repo))
    assert "uncommitted changes" not in clean.stderr


def make_clean(repo: Path) -> Path:
    git(repo, "checkout", "--", "README.md")
    return repo


def test_a_rebase_in_progress_gets_a_one_line_notice(repo: Path) -> None:
    _quick_bot()
    base = git(repo, "rev-parse", "HEAD")
    (repo / "README.md").write_text("theirs\n")
    git(repo, "commit", "-qam", "theirs")
    git(repo, "checkout", "-q", "-b", "topic", base)
    (repo / "README.md").write_text("ours\n")
    git(repo, "commit", "-qam", "ours")
    subprocess.run(["git", "rebase", "main"], cwd=repo, capture_output=True)  # stops on the conflict
    assert (repo / ".git" / "rebase-merge").is_dir()
    out = run_cli("run", "quick", cwd=repo)
    assert out.returncode == 0, out.stderr
    assert len([line for line in out.stderr.splitlines() if "rebase is in progress" in line]) == 1


def test_a_merge_in_progress_gets_a_notice(repo: Path) -> None:
    _quick_bot()
    git(repo, "checkout", "-q", "-b", "side")
    (repo / "README.md").write_text("side\n")
    git(repo, "commit", "-qam", "side")
    git(repo, "checkout", "-q", "main")
    (repo / "README.md").write_text("main\n")
    git(repo, "commit", "-qam", "main")
    subprocess.run(["git", "merge", "side"], cwd=repo, capture_output=True)
    out = run_cli("run", "quick", cwd=repo)
    assert out.returncode == 0, out.stderr
    assert "merge is in progress" in out.stderr


def test_an_orphan_branch_is_named_as_such(repo: Path) -> None:
    _quick_bot()
    git(repo, "checkout", "-q", "--orphan", "fresh")
    out = run_cli("run", "quick", cwd=repo)
    assert out.returncode == 2
    (line,) = out.stderr.strip().splitlines()
    assert "'fresh'" in line and "no commits yet" in line and "Traceback" not in out.stderr
    assert "make a first commit" not in line  # the repository has commits, just not on this branch


def test_a_shipped_examples_name_says_how_to_create_the_bot(repo: Path) -> None:
    out = run_cli("run", "test-writer", cwd=repo)
    assert out.returncode == 2
    (line,) = out.stderr.strip().splitlines()
    assert "openbot bots create test-writer --from test-writer" in line


def test_output_piped_to_head_exits_quietly(repo: Path) -> None:
    # More than a pipe holds (64 KiB) after `head` has gone, so a write is bound to meet EPIPE.
    for i in range(250):
        make_bot(f"bot{i:03d}", [reply("", complete())], f'description = "{"d" * 500}"')
    proc = subprocess.run(
        f"{sys.executable} -m openbot bots list | head -1",
        shell=True,
        cwd=repo,
        capture_output=True,
        text=True,
        executable="/bin/bash",
    )
    assert proc.stdout.startswith("bot000")
    assert "Traceback" not in proc.stderr and "Broken pipe" not in proc.stderr, proc.stderr


def test_help_shows_no_bool_placeholder(repo: Path) -> None:
    for args in (["run", "--help"], ["bots", "list", "--help"], ["--help"]):
        out = run_cli(*args, cwd=repo)
        assert out.returncode == 0
        assert "<bool>" not in out.stdout and "BOOLEAN" not in out.stdout, out.stdout
