"""Summaries shortened for a table or a line are cut at a word boundary, never inside a branch name or a
run id (issue 35, item 8): the end-of-run line, `history` (its table and the session's stored summary)
and the `fleet run` table."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import complete, make_bot, make_repo, reply, run_cli

BRANCH = "openbot/fixer-20261128T031802Z-938e"
RUN_ID = "20261128T031802Z-938e"
# Only names, so that every cut width (48, 70, 80, 120, 200, 300) falls on one unless it is at a space.
SUMMARY = " ".join([BRANCH, RUN_ID] * 12)


def cut_names(text: str) -> list[str]:
    """The words of `text` that are a branch name or run id cut short (a proper prefix of one)."""
    words = (w.rstrip("…") for w in text.split())
    return [w for w in words if w and any(n.startswith(w) and w != n for n in (BRANCH, RUN_ID))]


def test_no_shortened_summary_cuts_a_branch_name_or_a_run_id(tmp_path: Path) -> None:
    make_bot("fixer", [reply("", complete(SUMMARY, "review"))])
    repo = make_repo(tmp_path / "app")
    out = run_cli("run", "fixer", cwd=repo)
    assert out.returncode == 0, out.stderr
    said = next(ln for ln in out.stderr.splitlines() if ln.strip().startswith("summary:"))
    assert "…" in said and cut_names(said) == [], said

    listed = run_cli("history", "fixer", cwd=repo)
    row = next(ln for ln in listed.stdout.splitlines() if "completed" in ln)
    assert "…" in row and cut_names(row) == [], row

    (session,) = json.loads(run_cli("history", "fixer", "--json", cwd=repo).stdout)
    stored = session["response_summary"]  # kept to 500 characters in the session's record
    assert stored.endswith("…") and cut_names(stored) == [], stored

    fleet = tmp_path / "fleet.toml"
    fleet.write_text('bots = ["fixer"]\n[[repo]]\npath = "app"\n')
    make_bot("fixer", [reply("", complete(SUMMARY, "review"))])
    table = run_cli("fleet", "run", str(fleet), cwd=tmp_path, timeout=300)
    line = next(ln for ln in table.stdout.splitlines() if ln.startswith("fixer "))
    assert "…" in line and cut_names(line) == [], table.stdout
