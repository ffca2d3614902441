"""`openbot digest --format html` draws cost and verified/unverified runs per day as inline SVG (issue 35):
no JavaScript, and every bar says what it shows, so the test reads the bars back against the runs."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.helpers import complete, make_bot, make_repo, reply, run_cli

RUNS = (  # run id (its UTC day), cost, verified
    ("20261120T010000Z-aaaa", 0.5, True),
    ("20261120T020000Z-bbbb", 0.25, False),
    ("20261121T030000Z-cccc", 1.0, None),
)


def test_the_html_digest_charts_cost_and_verified_runs_per_day(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    make_bot("charted", [reply("", complete("done"))])
    out = run_cli("run", "charted", "--json", cwd=repo)
    summary = json.loads(out.stdout)
    artifacts = tmp_path / "artifacts"
    for run_id, cost, verified in RUNS:
        night = artifacts / run_id
        night.mkdir(parents=True)
        record = {**summary, "run_id": run_id, "cost_usd": cost, "verified": verified}
        (night / "result.json").write_text(json.dumps(record))
    page = tmp_path / "digest.html"
    made = run_cli(
        "digest", str(artifacts), "--since", "10000w", "--format", "html", "-o", str(page), cwd=tmp_path
    )
    assert made.returncode == 0, made.stderr
    html = page.read_text()
    assert "<svg" in html and "<script" not in html
    bars = {
        (m["day"], m["kind"]): (float(m["value"]), float(m["height"]))
        for m in re.finditer(
            r'<rect [^>]*height="(?P<height>[\d.]+)"[^>]*data-day="(?P<day>[^"]+)" '
            r'data-kind="(?P<kind>\w+)" data-value="(?P<value>[\d.]+)"',
            html,
        )
    }
    values = {key: value for key, (value, _) in bars.items()}
    assert values == {
        ("2026-11-20", "cost"): 0.75,
        ("2026-11-20", "verified"): 1,
        ("2026-11-20", "unverified"): 1,
        ("2026-11-21", "cost"): 1.0,
        ("2026-11-21", "verified"): 0,
        ("2026-11-21", "unverified"): 1,
    }
    height = {key: h for key, (_, h) in bars.items()}
    assert height[("2026-11-20", "cost")] == 0.75 * height[("2026-11-21", "cost")]  # to the dearest day
    assert height[("2026-11-20", "verified")] == height[("2026-11-20", "unverified")] > 0
    assert height[("2026-11-21", "verified")] == 0
