"""Every line a run says is an event of its own events.jsonl (docs/EVENTS.md): the warning of a run
without limits and the sleep between iterations are in the log as well as on stderr."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.helpers import complete, make_bot, make_repo, reply, run_cli, shell


def test_a_runs_warnings_and_sleeps_are_in_its_log(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    script = [reply("", shell("true")), reply("nothing to do yet"), reply("", complete("done", "review"))]
    make_bot("sayer", script, config="max_iterations = 0\nsleep_secs = 1")
    out = run_cli("run", "sayer", "--output", "json", cwd=repo)
    assert out.returncode == 0, out.stderr
    assert "!! no iteration limit and no budget" in out.stderr and "  sleeping 1s" in out.stderr
    run_id = json.loads(out.stdout)["run_id"]
    [log] = Path(os.environ["OPENBOT_HOME"]).glob(f"bots/sayer/workspaces/*/runs/{run_id}/events.jsonl")
    said = [json.loads(line) for line in log.read_text().splitlines()]
    notices = [(e["kind"], e["message"]) for e in said if e["type"] == "notice"]
    assert (
        "run_warning",
        "no iteration limit and no budget: this run goes on until the bot completes or ctrl-c",
    ) in notices
    assert ("sleeping", "sleeping 1s") in notices
