"""`openbot ps` lists the runs in flight and `openbot logs -f` follows one to its end (issue 35): a
scripted run whose command waits for a file the test writes, so nothing here depends on timing."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.helpers import complete, make_bot, make_repo, reply, run_cli, shell, start_run, wait_for, wrote

WAIT = "echo started > started.txt; while [ ! -e released ]; do sleep 0.05; done; echo let go"


def release(repo: Path, bot: str) -> None:
    (started,) = (repo / ".git" / "openbot-worktrees").glob(f"{bot}-*/started.txt")
    (started.parent / "released").write_text("")


def test_ps_lists_a_run_in_flight_and_logs_f_follows_it_until_it_ends(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# demo\n"})
    make_bot("waiter", [reply("", shell(WAIT, "wait")), reply("", complete("waited"))])
    assert run_cli("ps", cwd=repo).stdout.strip() == "no runs in flight"
    run = start_run("run", "waiter", cwd=repo, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: wrote(repo, "waiter", "started.txt"))
        (row,) = json.loads(run_cli("ps", "--json", cwd=repo).stdout)
        assert row["bot"] == "waiter" and row["repository"] == str(repo) and row["iteration"] == 1
        table = run_cli("ps", cwd=repo).stdout
        assert row["run_id"] in table and "waiter" in table
        follow = start_run("logs", "-f", "waiter", cwd=repo)
        assert follow.stdout is not None
        seen = []
        while not any("$ echo started" in line for line in seen):
            seen.append(follow.stdout.readline())
            assert seen[-1], f"logs -f ended before the run did: {seen}"
        assert follow.poll() is None  # the run is still waiting: so is `logs -f`
        release(repo, "waiter")
        rest, _ = follow.communicate(timeout=120)
        assert follow.returncode == 0
        assert "session completed" in rest and f"run {row['run_id']} ended: completed" in rest
        assert run.wait(timeout=120) == 0
    finally:
        run.kill()
    assert run_cli("ps", cwd=repo).stdout.strip() == "no runs in flight"
    once = run_cli("logs", row["run_id"], cwd=repo)  # without -f: what is there, then exit
    assert once.returncode == 0 and "$ echo started" in once.stdout and "session completed" in once.stdout
    missing = run_cli("logs", "nobot", cwd=repo)
    assert missing.returncode == 2 and "no run of bot or with run id 'nobot'" in missing.stderr
