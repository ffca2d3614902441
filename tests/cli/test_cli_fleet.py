"""`openbot fleet run` through the real CLI: two real repositories × scripted bots, a concurrency limit."""

from __future__ import annotations

import json
import signal
from pathlib import Path

from openbot import paths
from tests.helpers import (
    complete,
    git,
    make_bot,
    make_repo,
    reply,
    run_cli,
    shell,
    start_run,
    tool_started,
    wait_for,
)


def _bots() -> None:
    make_bot(
        "writer",
        [
            reply("", shell("echo made > made.txt && git add -A && git commit -qm made")),
            reply("", complete("made a file", "review")),
        ],
    )
    make_bot("stopper", [reply("", shell("true")), reply("not done yet")], config="max_iterations = 1")


def test_fleet_runs_every_repo_and_bot_and_exits_with_the_runs_code(tmp_path: Path) -> None:
    _bots()
    make_repo(tmp_path / "app"), make_repo(tmp_path / "lib")
    fleet = tmp_path / "fleet.toml"
    fleet.write_text(
        'bots = ["writer"]\nparallel = 3\n[[repo]]\npath = "app"\n[[repo]]\npath = "lib"\n'
        'bots = ["writer", "stopper", "writer"]\n'
    )
    out = run_cli("fleet", "run", str(fleet), "--parallel", "2", "--json", cwd=tmp_path, timeout=300)
    assert out.returncode == 3, out.stderr  # the one failing run's own code: stopped at a limit
    report = json.loads(out.stdout)
    assert report["exit_code"] == 3 and report["totals"]["runs"] == 3  # the duplicate pair ran once
    rows = [(Path(r["repo"]).name, r["bot"], r["status"], r["exit_code"]) for r in report["runs"]]
    assert rows == [
        ("app", "writer", "completed", 0),
        ("lib", "writer", "completed", 0),
        ("lib", "stopper", "limit", 3),
    ]
    for r in report["runs"][:2]:  # each ran in its own repository, exactly as `openbot run` there
        assert git(Path(r["repo"]), "show", f"{r['branch']}:made.txt") == "made"
        assert r["diffstat"] == {"files": 1, "insertions": 1, "deletions": 0}
        assert Path(r["log"]).is_file()
    assert report["runs"][2]["commands"]["continue"].endswith(f"--resume {report['runs'][2]['run_id']}")
    table = run_cli("fleet", "run", str(fleet), cwd=tmp_path, timeout=300)
    assert table.returncode == 3 and "3 runs in this fleet run" in table.stdout
    assert "Bot" in table.stdout and "stopper" in table.stdout and "limit" in table.stdout


def test_fleet_exit_0_only_when_every_run_exits_0_and_bad_input_is_exit_2(tmp_path: Path) -> None:
    _bots()
    make_repo(tmp_path / "app")
    fleet = tmp_path / "fleet.toml"
    fleet.write_text('bots = ["writer"]\n[[repo]]\npath = "app"\n')
    ok = run_cli("fleet", "run", str(fleet), cwd=tmp_path, timeout=300)
    assert ok.returncode == 0, ok.stderr + ok.stdout
    fleet.write_text('bots = ["nobody"]\n[[repo]]\npath = "app"\n')
    missing_bot = run_cli("fleet", "run", str(fleet), "--json", cwd=tmp_path, timeout=300)
    assert missing_bot.returncode == 2
    [row] = json.loads(missing_bot.stdout)["runs"]
    assert row["status"] == "error" and "nobody" in row["reason"]
    for text, key in (
        ('bots = ["writer"]\n[[repo]]\npath = "nowhere"\n', "repo[0].path"),
        ('bots = ["writer"]\nparalel = 2\n[[repo]]\npath = "app"\n', "paralel"),
        ('bots = ["../x"]\n[[repo]]\npath = "app"\n', "bots"),
        ("parallel = 0\n", "parallel"),
    ):
        fleet.write_text(text)
        bad = run_cli("fleet", "run", str(fleet), cwd=tmp_path)
        assert bad.returncode == 2 and key in bad.stderr and "fleet.toml" in bad.stderr, bad.stderr
        assert "Traceback" not in bad.stderr


def test_sigterm_stops_the_runs_in_flight_and_starts_no_more(tmp_path: Path) -> None:
    make_bot("sleeper", [reply("", shell("sleep 120")), reply("", complete("slept", "review"))])
    make_repo(tmp_path / "one"), make_repo(tmp_path / "two")
    fleet = tmp_path / "fleet.toml"
    fleet.write_text('bots = ["sleeper"]\nparallel = 1\n[[repo]]\npath = "one"\n[[repo]]\npath = "two"\n')
    proc = start_run("fleet", "run", str(fleet), "--json", cwd=tmp_path)
    wait_for(lambda: tool_started("sleeper"), timeout=120)
    records = list(paths.bot_home("sleeper").glob("workspaces/*/runs/*/run.json"))
    assert len(records) == 1  # parallel = 1: the second run waits for the first
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err
    first, second = json.loads(out)["runs"]
    assert first["status"] == "interrupted" and first["exit_code"] == 143 and first["run_id"]
    assert second["status"] == "interrupted" and "not started" in second["reason"] and not second["run_id"]
    assert json.loads(records[0].read_text())["status"] == "interrupted"


def test_the_docs_fleet_args_run_and_the_table_says_the_commands_and_a_reasons_start(tmp_path: Path) -> None:
    """docs/FLEET.md's `args` as written (it said `--max-cost`, which failed every run); the table keeps
    the start of a long reason, lists each run's next commands, and offers no --resume to a run that
    never started."""
    doc = (Path(__file__).parents[2] / "docs" / "FLEET.md").read_text()
    args_line = next(ln.split("#")[0].strip() for ln in doc.splitlines() if ln.startswith("args = ["))
    _bots()
    make_repo(tmp_path / "app")
    fleet = tmp_path / "fleet.toml"
    fleet.write_text(f'bots = ["stopper", "nobody-such"]\n{args_line}\n[[repo]]\npath = "app"\n')
    out = run_cli("fleet", "run", str(fleet), cwd=tmp_path, timeout=300)
    assert "No such option" not in out.stdout + out.stderr
    stopper = next(ln for ln in out.stdout.splitlines() if ln.startswith("stopper "))
    assert "limit" in stopper and "…" not in stopper.split("limit", 1)[1][:12]  # the reason's start is kept
    lines = out.stdout.splitlines()
    continues = [ln.strip() for ln in lines if ln.strip().startswith("continue:")]
    assert len(continues) == 1 and "openbot run stopper --resume " in continues[0], out.stdout
    assert continues[0].split("--resume ", 1)[1].strip()  # a real run id
    never = next(ln for ln in lines if ln.startswith("nobody-such "))
    assert "error" in never and "--resume" not in out.stdout.split(never, 1)[1].split("stopper", 1)[0]
