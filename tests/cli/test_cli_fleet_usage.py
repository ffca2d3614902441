"""A fleet run's log says `openbot run`, as the user would type it, not `python -m openbot run` (issue 35)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import make_bot, make_repo, reply, run_cli


def test_a_fleet_runs_log_names_the_command_openbot(tmp_path: Path) -> None:
    make_bot("flagged", [reply("done")])
    make_repo(tmp_path / "app")
    fleet = tmp_path / "fleet.toml"
    fleet.write_text('bots = ["flagged"]\n[[repo]]\npath = "app"\nargs = ["--no-such-flag"]\n')
    out = run_cli("fleet", "run", str(fleet), "--json", cwd=tmp_path, timeout=300)
    (row,) = json.loads(out.stdout)["runs"]
    log = Path(row["log"]).read_text()
    assert log.startswith("Usage: openbot run "), log
    assert "python -m openbot" not in log
