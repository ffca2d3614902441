"""scripts/bench_side_by_side.py reports no figure from a run that did not do the work.

The checks on a run are tested on runs made here: the scenario's 15 commands really run by bash in a real
repository (what a working tool sends back), then one thing spoilt at a time, as a failing tool would.
End to end, the script refuses a round whose commands failed (`--break`) and, when Codex is installed,
Codex with the old CODEX_HOME under the temporary directory (its sandbox then fails every command).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "bench_side_by_side.py"


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_side_by_side", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


bench = load()


def worked(tmp_path: Path, head: str = "exit code: 0\n") -> tuple[Any, Path]:
    """A scenario whose commands ran in a real repository, each result as openbot words it."""
    repo = bench.make_repo(tmp_path / "repo")
    scenario = bench.Scenario(nonce="5eed1e55")
    for i, command in enumerate(scenario.commands):
        out = subprocess.run(["bash", "-c", command], cwd=repo, capture_output=True, text=True)
        scenario.record(i, f"exit code: {out.returncode}\n{out.stdout}{out.stderr}", False)
    return scenario, repo


def test_a_run_that_did_all_the_work_is_verified(tmp_path: Path) -> None:
    scenario, repo = worked(tmp_path)
    assert bench.verify(0, bench.CALLS, scenario, repo) == []
    assert (repo / "checked.txt").read_text() == "checking 5eed1e55\n"


def test_the_markers_are_not_in_the_commands_so_only_output_can_carry_them() -> None:
    scenario = bench.Scenario(nonce="abcd0123")
    for i, command in enumerate(scenario.commands):
        assert scenario.marker(i) not in command
        assert command.endswith(f"&& printf 'done-%s-%02d\\n' abcd0123 {i + 1}")


CODEX_OLD = (
    "Chunk ID: abc0c2\nWall time: 0.0000 seconds\nProcess exited with code 1\nOriginal token count: 16\n"
    "Output:\nbwrap: execvp codex-linux-sandbox: No such file or directory\n"
)


def test_codex_with_its_home_under_tmp_is_refused(tmp_path: Path) -> None:
    """What the old script timed: Codex exited 0 after 16 calls, every command failed in its sandbox."""
    repo = bench.make_repo(tmp_path / "repo")
    scenario = bench.Scenario(nonce="5eed1e55")
    for i in range(len(bench.WORK)):
        scenario.record(i, CODEX_OLD, False)
    reasons = bench.verify(0, bench.CALLS, scenario, repo)
    assert reasons[0].startswith("15 of 15 commands failed; the first: command 1 (ls -la): failed")
    assert "codex-linux-sandbox" in reasons[0]
    assert "the repository has no checked.txt saying 'checking 5eed1e55'" in reasons


def spoil(kind: str, scenario: Any, repo: Path) -> tuple[int, int]:
    """Spoil one thing in a run that worked; returns (exit code, scenario calls)."""
    text, _ = scenario.results[3]
    if kind == "rc":
        return 1, bench.CALLS
    if kind == "calls":
        return 0, bench.CALLS - 1
    if kind == "missing":
        del scenario.results[3]
    elif kind == "no marker":  # a tool that says success but ran nothing
        scenario.results[3] = ("exit code: 0\n", False)
    elif kind == "stale marker":  # another run's output
        scenario.results[3] = (text.replace("5eed1e55", "0ther000"), False)
    elif kind == "is_error":  # Claude Code's flag on a failed command
        scenario.results[3] = (text.replace("exit code: 0\n", ""), True)
    elif kind == "status":
        scenario.results[3] = (text.replace("exit code: 0", "exit code: 2"), False)
    elif kind == "file not read back":
        text, _ = scenario.results[9]
        scenario.results[9] = (text.replace("checking 5eed1e55", "checking"), False)
    elif kind == "no file":
        (repo / "checked.txt").unlink()
    elif kind == "stale file":
        (repo / "checked.txt").write_text("checking 0ther000\n")
    elif kind == "notes left":
        (repo / "notes.txt").write_text("x\n")
    return 0, bench.CALLS


@pytest.mark.parametrize(
    "kind, reason",
    [
        ("rc", "the tool exited 1"),
        ("calls", "15 of 16 model calls"),
        ("missing", "command 4 (git log --oneline -3): its result never reached the model"),
        ("no marker", "command 4 (git log --oneline -3): no marker in its output"),
        ("stale marker", "command 4 (git log --oneline -3): no marker in its output"),
        ("is_error", "command 4 (git log --oneline -3): failed (is_error)"),
        ("status", "command 4 (git log --oneline -3): failed (exit code: 2)"),
        ("file not read back", "command 10 (cat notes.txt): output lacks 'checking 5eed1e55'"),
        ("no file", "the repository has no checked.txt saying 'checking 5eed1e55'"),
        ("stale file", "the repository has no checked.txt saying 'checking 5eed1e55'"),
        ("notes left", "notes.txt is still in the repository"),
    ],
)
def test_each_missing_proof_fails_the_run(tmp_path: Path, kind: str, reason: str) -> None:
    scenario, repo = worked(tmp_path)
    rc, calls = spoil(kind, scenario, repo)
    reasons = bench.verify(rc, calls, scenario, repo)
    assert len(reasons) == 1 and reasons[0].startswith(reason), reasons


def run(peer: str, round: int, value: float, verified: bool = True) -> dict[str, Any]:
    figures = {key: value for key, _, _ in bench.FIELDS}
    return {"peer": peer, "round": round, "verified": verified, "load": 1.0, **figures}


def test_a_round_with_a_failed_run_is_dropped_and_too_few_rounds_give_no_table() -> None:
    """Round 2's Codex run failed (and was fast, as a run whose commands all fail is): it must weigh
    in neither the medians nor the ratios, and with 3 rounds asked there is no table at all."""
    peers = ["openbot", "codex"]
    runs = [run("openbot", 1, 1.0), run("codex", 1, 2.0), run("openbot", 3, 1.0), run("codex", 3, 4.0)]
    runs += [run("openbot", 2, 1.0), run("codex", 2, 0.1, verified=False)]
    code, text = bench.summarise(runs, peers, 3)
    assert code == 1 and "|" not in text
    assert text.startswith("bench: 2 of 3 rounds verified (failed runs by codex;")
    with pytest.raises(AssertionError, match="a figure from a failed run"):
        bench.table([{r["peer"]: r for r in runs if r["round"] == 2}], peers)
    two = [{**r, "round": 2} if r["round"] == 3 else r for r in runs if r["round"] != 2]
    code, text = bench.summarise(two, peers, 2)
    assert code == 0 and "| whole run | 1.00 s | 3.00 s | 0.38× |" in text, text
    assert "2 interleaved rounds, every run verified" in text


def test_the_end_of_a_run_is_timed_from_the_last_model_request_to_the_exit() -> None:
    """Issue 36's figure: what a tool does after the model's last word (answered at once by the server).
    A call that is not the scenario's (a title or a summary after it) does not move its start."""
    calls = [(10.0, True, 100, 0), (10.5, True, 100, 0), (11.0, True, 100, 0), (11.1, False, 10, 0)]
    stats = {"t0": 9.0, "t1": 11.25, "rc": 0, "maxrss_kb": 1024, "cpu_s": 0.5}
    figures = bench.figures(calls, stats)
    assert figures["end_s"] == pytest.approx(0.25) and figures["loop_s"] == pytest.approx(1.0)
    assert "end_s" in [key for key, _, _ in bench.FIELDS]


def test_the_slowdown_under_the_neighbour_is_each_tools_own_ratio() -> None:
    peers = ["openbot", "claude"]
    idle = [{**run("openbot", 1, 1.0), "pass": "idle"}, {**run("claude", 1, 2.0), "pass": "idle"}]
    loaded = [{**run("openbot", 1, 1.5), "pass": "neighbour"}, {**run("claude", 1, 3.4), "pass": "neighbour"}]
    text = bench.slowdown({"idle": idle, "neighbour": loaded}, peers)
    assert "| 16-call loop | 1.50× | 1.70× |" in text and "| end of run | 1.50× | 1.70× |" in text, text


def test_the_neighbour_pass_runs_with_a_cpu_bound_process_it_starts_and_stops(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each run of the neighbour pass sees one more process of this script's spinning; the idle pass none;
    none is left after the pass."""
    seen: list[tuple[str, int]] = []

    def children() -> list[int]:
        found = []
        for task in os.listdir(f"/proc/{os.getpid()}/task"):
            found += [int(p) for p in Path(f"/proc/{os.getpid()}/task/{task}/children").read_text().split()]
        return [p for p in found if bench.NEIGHBOUR.encode() in Path(f"/proc/{p}/cmdline").read_bytes()]

    def fake_bench(args: Any, peers: list[str], state: Path, opts: Any) -> list[dict[str, Any]]:
        seen.append((args.passes, len(children())))
        return [run("openbot", 1, 1.0)]

    monkeypatch.setattr(bench, "bench", fake_bench)
    args = bench.parse_args(["--rounds", "1"])
    for name in ("idle", "neighbour"):
        args.passes = name
        runs = bench.bench_pass(name, args, ["openbot"], Path("/nonexistent"), None)
        assert runs[0]["pass"] == name
    assert seen == [("idle", 0), ("neighbour", 1)] and children() == []


def script(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "BENCH_DIR": str(tmp_path), "PYTHONPATH": str(SCRIPT.parent.parent)}
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--rounds", "1", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        stdin=subprocess.DEVNULL,
    )


def test_the_floor_does_the_work_and_is_refused_when_its_commands_fail(tmp_path: Path) -> None:
    """The reference every tool is above: verified as the tools are, and its round trips kept."""
    out = tmp_path / "runs.json"
    good = script(tmp_path, "--peers", "floor", "--passes", "idle", "--json", str(out))
    assert good.returncode == 0, good.stderr
    assert "round 1 floor: verified" in good.stderr and "| 16-call loop |" in good.stdout
    runs = json.loads(out.read_text())
    assert [len(r["round_trips_s"]) for r in runs] == [15]
    assert all(t > 0 for r in runs for t in r["round_trips_s"])
    broken = script(tmp_path, "--peers", "floor", "--passes", "idle", "--break", "floor")
    assert broken.returncode == 1 and broken.stdout == ""
    assert "15 of 15 commands failed; the first: command 1 (ls -la): failed (exit code: 1)" in broken.stderr
    assert "the repository has no checked.txt" in broken.stderr


@pytest.mark.slow
def test_openbot_end_to_end_verified_and_broken(tmp_path: Path) -> None:
    good = script(tmp_path, "--peers", "openbot", "--passes", "idle")
    assert good.returncode == 0, good.stderr
    assert "round 1 openbot: verified" in good.stderr and "| whole run |" in good.stdout
    broken = script(tmp_path, "--peers", "openbot", "--passes", "idle", "--break", "openbot")
    assert broken.returncode == 1 and broken.stdout == ""
    assert "round 1 openbot: FAILED, figures not used" in broken.stderr
    assert "15 of 15 commands failed; the first: command 1 (ls -la): failed (exit code: 1)" in broken.stderr
    assert "bench: 0 of 1 rounds verified (failed runs by openbot;" in broken.stderr


@pytest.mark.slow
@pytest.mark.skipif(
    shutil.which("codex") is None, reason="codex is not installed (npm install -g @openai/codex)"
)
def test_codex_runs_its_commands_only_with_its_home_outside_tmp(tmp_path: Path) -> None:
    # one pass: the neighbour's pass runs the same codex again, and its CPU-bound process slows the suite
    old = script(tmp_path, "--peers", "codex", "--passes", "idle", "--old-codex-home")
    assert old.returncode == 1 and old.stdout == ""
    assert "15 of 15 commands failed" in old.stderr and "codex-linux-sandbox" in old.stderr
    new = script(tmp_path, "--peers", "codex", "--passes", "idle")
    assert new.returncode == 0, new.stderr
    assert "round 1 codex: verified" in new.stderr and "| whole run |" in new.stdout
