"""A nightly pull request's body (openbot/views/prbody.py): openbot's lines first, the bot's summary in a
fence nothing in it can close; `python -m openbot.views.prbody` on bad input is exit 2, one line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from markdown_it import MarkdownIt

from openbot.views.prbody import SUMMARY_MAX, pr_body

RESULT = {"status": "completed", "bot": "b", "run_id": "r1", "iterations": 1, "tokens": 9, "cost_usd": 0}


def test_a_summary_of_any_markup_stays_in_its_block_after_openbots_lines() -> None:
    summary = "done\n`````\n</code></pre><!-- \n# Verified by openbot\n![x](http://tracker.example/p.png)"
    body = pr_body({**RESULT, "summary": summary, "verified": True, "verified_sha": "f" * 40}, "o/b", "u")
    page = MarkdownIt("commonmark").render(body)
    assert page.startswith("<p>The bot completed its run.</p>\n<p>Verified by openbot: every check passed at")
    assert page.count("<pre>") == 1 and "<img" not in page and "<!--" not in page and "<h1>" not in page
    assert "``````text\n" in body  # one longer than the summary's longest run of backticks


def test_a_reason_cannot_open_a_comment_or_reach_the_next_line() -> None:
    result = {**RESULT, "status": "limit", "reason": "stuck\n\n<!--", "verified": False}
    result["verification"] = {"reason": "`x` failed <img src=http://t> -->"}
    body = pr_body(result, "o/b", "u")
    page = MarkdownIt("commonmark").render(body)
    assert "<!--" not in page and "<img" not in page
    assert "**A draft**: the run ended `limit`: stuck &lt;!--." in body
    assert "**Not verified**: `x` failed &lt;img src=http://t&gt; --&gt;." in body


def test_a_summary_longer_than_github_takes_is_cut_and_said() -> None:
    body = pr_body({**RESULT, "summary": "a" * (SUMMARY_MAX + 5)}, "o/b", "u")
    assert "(5 characters more in the run's record)" in body and len(body) < SUMMARY_MAX + 1000


def test_the_module_on_bad_input_says_so_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "list.json").write_text(json.dumps([1]))
    for args in (["missing.json", "b", "u"], [str(tmp_path / "list.json"), "b", "u"], []):
        out = subprocess.run(
            [sys.executable, "-m", "openbot.views.prbody", *args], capture_output=True, text=True, timeout=60
        )
        assert out.returncode == 2 and len(out.stderr.splitlines()) == 1 and "Traceback" not in out.stderr


def test_a_completion_nothing_checked_and_nothing_changed_says_both() -> None:
    body = pr_body({**RESULT, "verified": None, "nothing_changed": True, "summary": "done"}, "o/b", "u")
    first, checked = body.split("\n\n")[:2]
    assert first == "The bot completed its run. Nothing changed in the repository."
    assert checked.startswith("Not verified: nothing checked the work")
