"""Launch → first model request, counted in processes rather than timed (issue 22): on a loaded machine
each process before the first request waits for a core. A logging `git` first on PATH records every git
the run starts; the loopback Messages API notes how many had started when the first request arrived.
"""

from __future__ import annotations

from pathlib import Path

from openbot import paths
from openbot.testing.fakeapi import FakeAnthropic
from openbot.testing.fakeapi import reply as fake_reply
from tests.helpers import logged_program, run_cli

# HEAD, the hooks check, `git status`, the free branch name, the user's config (read once for preflight's
# LFS check and the run repository), the checkout, .gitmodules, the commit identity; plus the LFS grep where
# git-lfs is installed and set up. Before: HEAD and the config were read again (12 with git-lfs, 9 without).
MAX_GIT = 8


def test_few_git_processes_start_before_the_first_model_request(repo: Path, tmp_path: Path) -> None:
    log = tmp_path / "git.log"
    path = logged_program("git", tmp_path / "gitbin", log)
    bot = paths.bot_home("counted")
    bot.mkdir(parents=True)
    config = 'model = "claude-sonnet-5-5"\nmax_iterations = 1\nsleep_secs = 0'
    (bot / "config.md").write_text(f"+++\n{config}\n+++\n\nWork.\n")
    before: list[str] = []

    def first(body: dict[str, object]) -> None:
        if not before:
            before.extend(log.read_text().splitlines() if log.exists() else ["(none)"])

    done = fake_reply("", [{"name": "session_complete", "input": {"summary": "ok", "action": "discard"}}])
    with FakeAnthropic([done], respond=first) as api:
        env = {
            **path,
            "ANTHROPIC_BASE_URL": api.base_url,
            "ANTHROPIC_API_KEY": "sk-ant-test-0000",
        }
        out = run_cli("run", "counted", cwd=repo, env=env)
    assert out.returncode == 0, out.stderr
    assert before, "the run made no model request"
    lfs_grep = any(" grep " in f" {call} " for call in before)
    assert len(before) <= MAX_GIT + lfs_grep, "\n".join(before)
