"""A run that did not complete is summarised by what stopped it and what it did, not by the model's last
sentence (which says what it meant to do next): in --json, history, notifications and the HTML export."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import git, make_bot, metadata, run_cli, sessions, shell

USAGE = {"input": 100, "output": 10}


def test_a_limit_stopped_run_says_what_stopped_it_and_what_it_did(repo: Path) -> None:
    commit = shell("echo one > one.txt && git add one.txt && git commit -qm one")
    make_bot(
        "capped",
        [
            {"text": "", "tool_calls": [commit], "usage": USAGE},
            {
                "text": "I will run the whole test suite next.",
                "tool_calls": [shell("echo more")],
                "usage": USAGE,
            },
            {"text": "never asked", "usage": USAGE},
        ],
        config="max_tokens = 200",
    )
    out = run_cli("run", "capped", "--json", cwd=repo)
    assert out.returncode == 3, out.stderr
    result = json.loads(out.stdout)
    summary = result["summary"]
    assert summary.startswith("stopped by a limit: token limit reached"), summary
    assert f"1 commit on {result['branch']} (1 file, +1 -0)" in summary and "2 commands" in summary
    assert "whole test suite" not in summary
    [session] = sessions("capped")
    said = metadata(session)["response_summary"]
    assert said.startswith("stopped by a limit: token limit reached") and "(the last: echo more)" in said
    listed = run_cli("history", "capped", cwd=repo).stdout
    assert "stopped by a limit" in listed and "whole test suite" not in listed
    page = run_cli("history", "capped", "--export", "html", "-o", str(repo.parent / "p.html"), cwd=repo)
    assert page.returncode == 0 and "stopped by a limit" in (repo.parent / "p.html").read_text()


def test_the_wip_commit_message_holds_no_status_a_later_pr_would_contradict(repo: Path) -> None:
    make_bot("wip", [{"text": "", "tool_calls": [shell("echo draft > draft.txt")]}, {"text": "paused"}],
             config="max_iterations = 1")  # fmt: skip
    out = run_cli("run", "wip", "--json", cwd=repo)
    result = json.loads(out.stdout)
    assert out.returncode == 3 and result["wip_commits"], out.stderr
    message = git(repo, "log", "-1", "--format=%s", result["wip_commits"][-1])
    assert message == f"openbot: WIP: uncommitted work of wip, saved at the end of run {result['run_id']}"
