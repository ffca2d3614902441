"""CI detection and the GitHub Actions step summary rendered from a run's `--json` result."""

from __future__ import annotations

from pathlib import Path

import pytest

from openbot.views.ci_summary import in_ci, step_summary_markdown, write_step_summary

RESULT = {
    "run_id": "20260101T020000Z-ab12",
    "bot": "test-writer",
    "branch": "openbot/test-writer-20260101T020000Z",
    "base": "main",
    "status": "completed",
    "exit_code": 0,
    "iterations": 3,
    "summary": "Added tests for the parser.\n\nCovered the `|` edge case too.",
    "action": "review",
    "tokens": 123456,
    "cost_usd": 1.234,
    "session_ids": ["000001-20260101T020000Z", "000002-20260101T021000Z"],
    "resume_command": "openbot run test-writer --resume 20260101T020000Z-ab12",
    "command_count": 42,
}


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({}, False),
        ({"CI": "true"}, True),
        ({"CI": "1"}, True),
        ({"CI": "false"}, False),
        ({"GITHUB_ACTIONS": "true"}, True),
        ({"CI": "", "GITHUB_ACTIONS": "TRUE"}, True),
        ({"GITHUB_STEP_SUMMARY": "/tmp/x"}, False),
    ],
)
def test_in_ci(environ: dict[str, str], expected: bool) -> None:
    assert in_ci(environ) is expected


def _table(md: str) -> dict[str, str]:
    rows = [line for line in md.splitlines() if line.startswith("| ") and not line.startswith("| |")]
    return {cells[0]: cells[1] for cells in (r.strip("| ").split(" | ", 1) for r in rows)}


def test_summary_has_every_field() -> None:
    md = step_summary_markdown(RESULT)
    assert md.splitlines()[0] == "### ✅ openbot `test-writer`: completed"
    assert _table(md) == {
        "Status": "completed (exit code 0)",
        "Branch": "`openbot/test-writer-20260101T020000Z` from `main`",
        "Iterations": "3",
        "Commands run": "42",
        "Tokens": "123,456",
        "Cost": "$1.23",
        "Verified": "not verified: nothing checked the work",  # completed, and nothing checked it
        "Action": "review",
        "Run": "`20260101T020000Z-ab12`",
        "Sessions": "`000001-20260101T020000Z`, `000002-20260101T021000Z`",
    }
    assert "> Added tests for the parser.\n>\n> Covered the `|` edge case too." in md
    assert "```sh\nopenbot run test-writer --resume 20260101T020000Z-ab12\n```" in md


def test_limit_and_failure_headings() -> None:
    assert step_summary_markdown({**RESULT, "status": "limit", "exit_code": 3}).startswith("### ⚠️ ")
    assert step_summary_markdown({**RESULT, "status": "failed", "exit_code": 1}).startswith("### ❌ ")
    assert step_summary_markdown({"bot": "x"}).startswith("### ❔ openbot `x`: unknown")


def test_cells_cannot_break_the_table() -> None:
    md = step_summary_markdown(
        {**RESULT, "action": "a|b\nc", "branch": "x`y|z", "tokens": {"input": 5, "output": 7}}
    )
    table = _table(md)
    assert table["Action"] == "a\\|b c"
    assert table["Branch"] == "`` x`y\\|z `` from `main`"
    assert table["Tokens"] == "12 (input 5, output 7)"
    # Every table row still has exactly two unescaped separators besides the outer ones.
    for line in md.splitlines():
        if line.startswith("| "):
            assert len(line.replace("\\|", "").split("|")) == 4, line


def test_missing_fields_do_not_crash() -> None:
    md = step_summary_markdown({"bot": "b", "status": "failed", "exit_code": 2, "tokens": 0, "cost_usd": 0})
    table = _table(md)
    assert table["Tokens"] == "0" and table["Cost"] == "$0.00" and table["Action"] == "—"
    assert "Branch" not in table and "Commands run" not in table
    assert "_none_" in md and "resume" not in md.lower()


def test_reason_and_action_message() -> None:
    md = step_summary_markdown(
        {
            **RESULT,
            "status": "limit",
            "exit_code": 3,
            "reason": "iteration limit reached (3)",
            "action_message": "kept openbot/x for review",
        }
    )
    table = _table(md)
    assert table["Status"] == "limit: iteration limit reached (3) (exit code 3)"
    assert table["Action"] == "review — kept openbot/x for review"


def test_small_costs_keep_precision() -> None:
    assert _table(step_summary_markdown({**RESULT, "cost_usd": 0.0042}))["Cost"] == "$0.0042"


def test_write_step_summary_appends(tmp_path: Path) -> None:
    path = tmp_path / "summary.md"
    path.write_text("earlier step\n")
    assert write_step_summary(RESULT, {"GITHUB_STEP_SUMMARY": str(path)}) is True
    assert write_step_summary({**RESULT, "bot": "docs-fixer"}, {"GITHUB_STEP_SUMMARY": str(path)}) is True
    text = path.read_text()
    assert text.startswith("earlier step\n### ✅ openbot `test-writer`")
    assert "openbot `docs-fixer`" in text


def test_write_step_summary_without_a_target(tmp_path: Path) -> None:
    assert write_step_summary(RESULT, {}) is False
    assert (
        write_step_summary(RESULT, {"GITHUB_STEP_SUMMARY": str(tmp_path / "missing-dir" / "s.md")}) is False
    )
