"""Last model reply → exit, counted in git processes rather than timed (issue 36): on a loaded machine each
process on the way out waits for a core. A logging `git` first on PATH records every git the run starts;
the loopback Messages API notes how many had started when the last request arrived, so what follows is
the end of the run. (The agent's own git runs in its sandbox, where the log's directory is hidden.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from openbot import paths
from openbot.testing.fakeapi import FakeAnthropic
from openbot.testing.fakeapi import reply as fake_reply
from tests.helpers import git, logged_program, run_cli

COMMIT = "echo hi > note.txt && git add note.txt && git commit -qm note"


def _end(repo: Path, tmp_path: Path, command: str, action: str) -> tuple[list[str], dict[str, object]]:
    """The git processes the run started after its last model request, and its --json result."""
    log = tmp_path / "git.log"
    path = logged_program("git", tmp_path / "gitbin", log)
    bot = paths.bot_home("ender")
    bot.mkdir(parents=True)
    config = 'model = "claude-sonnet-5-5"\nsleep_secs = 0\nmax_iterations = 1'
    (bot / "config.md").write_text(f"+++\n{config}\n+++\n\nWork.\n")
    seen: list[int] = []

    def note(body: dict[str, object]) -> None:
        seen.append(len(log.read_text().splitlines()) if log.exists() else 0)

    replies = [
        fake_reply("", [{"name": "shell", "input": {"command": command}}]),
        fake_reply("", [{"name": "session_complete", "input": {"summary": "ok", "action": action}}]),
    ]
    with FakeAnthropic(replies, respond=note) as api:
        env = {**path, "ANTHROPIC_BASE_URL": api.base_url, "ANTHROPIC_API_KEY": "sk-ant-test-0000"}
        out = run_cli("run", "ender", "--json", cwd=repo, env=env)
    assert out.returncode == 0, out.stderr
    assert len(seen) == 2, "the run made fewer model requests than scripted"
    return log.read_text().splitlines()[seen[-1] :], json.loads(out.stdout)


@pytest.mark.parametrize("action", ["review", "discard", "merge"])
def test_a_run_that_changed_nothing_starts_no_git_on_its_way_out(
    repo: Path, tmp_path: Path, action: str
) -> None:
    calls, result = _end(repo, tmp_path, "ls && git status --short", action)
    # Before: the WIP commit's filter configuration was read (`git config --list`, twice) to commit nothing.
    assert calls == []
    assert result["action"] == "discard" and git(repo, "branch", "--list", "openbot/*") == ""


def test_a_discard_makes_no_wip_commit_and_says_what_it_dropped(repo: Path, tmp_path: Path) -> None:
    calls, result = _end(repo, tmp_path, "echo x > scratch.txt && echo y >> README.md", "discard")
    # Before: 7 git processes to commit the scratch, bring it home as a branch and delete that branch.
    assert calls == []
    assert result["action"] == "discard"
    said = str(result["action_message"])
    assert "uncommitted changes not saved: README.md, scratch.txt" in said, said
    assert git(repo, "branch", "--list", "openbot/*") == ""


def test_a_discarded_commit_is_brought_home_to_restore_and_no_branch_is_made(
    repo: Path, tmp_path: Path
) -> None:
    calls, result = _end(repo, tmp_path, COMMIT + " && echo x > scratch.txt", "discard")
    # The commit's objects are imported, verified (fetch, then the check that it arrived), so the restore
    # the message offers works; no branch is made to be deleted again, no WIP commit, no hooks check.
    # Before: 9 (two config reads, the fetch and check of the commit and of the WIP commit, update-ref,
    # diff-tree, update-ref -d).
    known = ("fetch", "cat-file", "update-ref", "diff-tree", "config")
    verbs = [next((w for w in known if f" {w} " in c), c) for c in calls]
    assert verbs == ["fetch", "cat-file"], calls
    said = str(result["action_message"])
    assert "uncommitted changes not saved: scratch.txt" in said, said
    restore = said.split("restore with `")[1].split("`")[0].split()
    assert git(repo, "branch", "--list", "openbot/*") == ""
    git(repo, *restore[1:])
    assert git(repo, "show", f"{restore[2]}:note.txt") == "hi"
