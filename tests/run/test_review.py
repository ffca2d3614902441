"""A second model reviews verified work before it is merged (the bot's `review` key, run/review.py),
through the real CLI with scripted models for the bot and for its reviewer: a review that asks for changes
once makes the bot change its work before the merge; one that never approves ends `unreviewed` (exit 7)
with nothing merged and the branch kept; a bad `review` table is exit 2 in one line; no `review`, no
change."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from openbot import paths
from tests.helpers import complete, git, make_bot, make_repo, reply, run_cli, sessions, shell

FILES = {"calc.py": "def answer():\n    return 41\n", "test_calc.py": "import calc\nprint('ok')\n"}
VERIFY = 'verify = ["python3 test_calc.py"]\n'
FIX = shell("sed -i s/41/42/ calc.py && git commit -qam 'answer 42'")
DOC = shell('printf \'"""The answer."""\\n\' > doc.py && git add doc.py && git commit -qm \'doc\'')
ASKS = "calc.py: answer() has no docstring; add doc.py with one.\n\nREQUEST CHANGES"


def reviewer(bot_dir: Path, texts: list[str]) -> str:
    """The reviewer's script beside the bot's config.md; the `review` line naming it."""
    (bot_dir / "review.json").write_text(json.dumps({"responses": [{"text": t} for t in texts]}))
    return 'review = { model = "scripted:review.json", attempts = 2 }\n'


def bot_with_review(name: str, script: list[dict[str, Any]], reviews: list[str], extra: str = "") -> None:
    bot_dir = make_bot(name, script, VERIFY + extra)
    config = (bot_dir / "config.md").read_text()
    (bot_dir / "config.md").write_text(config.replace(VERIFY, VERIFY + reviewer(bot_dir, reviews)))


def all_events(bot: str, kind: str) -> list[dict[str, Any]]:
    found = []
    for s in sessions(bot):
        found += [json.loads(x) for x in (s / "events.jsonl").read_text().splitlines()]
    return [e for e in found if e["type"] == kind]


def conversation(bot: str) -> str:
    return next(paths.bot_home(bot).glob("workspaces/*/runs/*/conversation.jsonl")).read_text()


def test_a_review_that_asks_for_changes_once_makes_the_bot_change_its_work_before_the_merge(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    script = [
        reply("", FIX),
        reply("", complete("42", "merge")),
        reply("", DOC),
        reply("", complete("doc", "merge")),
    ]
    bot_with_review("reviewed", script, [ASKS, "Looks right now.\nAPPROVE"])
    out = run_cli("run", "reviewed", "--json", cwd=repo)
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert summary["status"] == "completed" and summary["reviewed"] is True and summary["action"] == "merge"
    # The merged tree has the change the review asked for, and the verified sha is what was merged.
    assert (repo / "doc.py").read_text() == '"""The answer."""\n' and "return 42" in (
        repo / "calc.py"
    ).read_text()
    assert git(repo, "rev-parse", "main") == summary["verified_sha"]
    first, second = all_events("reviewed", "review")
    assert not first["approved"] and first["comments"] == ASKS and first["attempt"] == 1
    assert second["approved"] and second["sha"] == summary["verified_sha"]
    assert "reviewed: approved after 2 review(s)" in out.stderr and "✓ approved: review 2 of 2" in out.stderr
    # The bot got the reviewer's words as data, fenced and labelled, as its next turn.
    said = json.loads(json.dumps(conversation("reviewed")))
    assert "a reviewer read the change and asked for changes (review 1 of 2)" in said
    assert "```text\\ncalc.py: answer() has no docstring" in said


def test_a_review_that_never_approves_ends_unreviewed_exit_7_nothing_merged_branch_kept(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    before = git(repo, "rev-parse", "main")
    script = [
        reply("", FIX),
        reply("", complete("42", "merge")),
        reply("", DOC),
        reply("", complete("doc", "merge")),
    ]
    bot_with_review("refused", script, [ASKS, "Still not right.\nLGTM"])  # no verdict line: request changes
    out = run_cli("run", "refused", "--json", cwd=repo)
    assert out.returncode == 7, out.stderr
    summary = json.loads(out.stdout)
    assert summary["status"] == "unreviewed" and summary["reviewed"] is False and summary["verified"] is True
    assert "not approved after 2 review(s)" in summary["reason"]
    assert git(repo, "rev-parse", "main") == before  # nothing merged
    assert git(repo, "rev-parse", summary["branch"]) == summary["verified_sha"]  # the branch kept
    assert "not approved by its review" in summary["action_message"]
    # The end line and the live view say it; the reviewer's words are shown where it asked for changes.
    assert "openbot: run" in out.stderr and "unreviewed" in out.stderr
    assert "NOT approved by its review: 2 review(s) by scripted:" in out.stderr
    assert "✗ changes requested: review 1 of 2 by scripted:" in out.stderr
    assert "calc.py: answer() has no docstring" in out.stderr
    second = all_events("refused", "review")[-1]
    assert not second["approved"] and "neither APPROVE nor REQUEST CHANGES" in second["note"]


def test_without_review_a_verified_merge_is_unchanged(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    make_bot("plain", [reply("", FIX), reply("", complete("42", "merge"))], VERIFY)
    out = run_cli("run", "plain", "--json", cwd=repo)
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert summary["reviewed"] is None and summary["action"] == "merge" and not all_events("plain", "review")


def test_a_bad_review_table_is_exit_2_in_one_line(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    for name, line, said in [
        ("nomodel", 'review = { prompt = "x" }', "key 'review.model' is missing"),
        ("badkey", 'review = { model = "scripted:r.json", tries = 2 }', "key 'review.tries' is unknown"),
        ("badnum", 'review = { model = "scripted:r.json", attempts = 0 }', "key 'review.attempts' must be"),
        ("nofile", 'review = { model = "scripted:missing.json" }', "missing.json"),
    ]:
        make_bot(name, [reply("", complete())], VERIFY + line)
        out = run_cli("run", name, cwd=repo)
        assert out.returncode == 2 and said in out.stderr, (name, out.stderr)
        assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr
