"""`openbot fleet run`: each (repository, bot) of a fleet.toml run exactly as `openbot run <bot> --json`
would be, as a subprocess of the real CLI in that repository, at most `parallel` at a time; their
`--json` summaries become the digest's rows (openbot.state.digest)."""

from __future__ import annotations

import json
import signal
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from openbot import gate, paths
from openbot.config.fleet import Fleet, FleetRun
from openbot.errors import EXIT_FAILED, EXIT_OK
from openbot.state.digest import row


class _Stopper:
    """SIGTERM / SIGHUP to the fleet reach every run in flight (each stops cleanly and keeps its work) and
    start no new one; ctrl-c from a terminal reaches the runs by itself (one process group), so SIGINT is
    only recorded."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.live: set[gate.Popen[bytes]] = set()
        self.signum = 0

    def __call__(self, signum: int, frame: object) -> None:
        with self.lock:
            self.signum = signum
            for proc in self.live if signum != signal.SIGINT else ():
                proc.send_signal(signum)

    def start(self, argv: list[str], cwd: Path, err: IO[bytes]) -> gate.Popen[bytes] | None:
        with self.lock:
            if self.signum:
                return None
            proc = gate.popen(gate.FLEET_RUN, argv, cwd=cwd, stdin=gate.DEVNULL, stdout=gate.PIPE, stderr=err)
            self.live.add(proc)
            return proc


def run_fleet(fleet: Fleet, parallel: int) -> list[dict[str, object]]:
    """One digest row per run (with its `exit_code` and `log`), in the fleet file's order."""
    logs = paths.home() / "fleet" / datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    logs.mkdir(parents=True, exist_ok=True)
    stopper = _Stopper()
    old = {s: signal.signal(s, stopper) for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)}
    try:
        with ThreadPoolExecutor(max_workers=parallel) as pool:
            jobs = [
                (job, logs / f"{n:03d}-{job.repo.name}-{job.bot}.log") for n, job in enumerate(fleet.runs)
            ]
            return list(pool.map(lambda pair: _one(pair[0], pair[1], stopper), jobs))
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)


# `python -m openbot` would name itself so in its usage lines, and a run's log is read by a user who typed
# `openbot`: the child runs the console entry under that name.
AS_OPENBOT = "import sys; sys.argv[0] = 'openbot'; from openbot.cli.app import main; main()"


def _one(job: FleetRun, log: Path, stopper: _Stopper) -> dict[str, object]:
    argv = [sys.executable, "-P", "-c", AS_OPENBOT, "run", job.bot, "--json", *job.args]
    with open(log, "wb") as err:
        proc = stopper.start(argv, job.repo, err)
        if proc is None:
            why = f"not started: the fleet was stopped by {signal.Signals(stopper.signum).name}"
            summary: Any = {"bot": job.bot, "run_id": "", "status": "interrupted", "reason": why}
            return _row(summary, job, log, 128 + stopper.signum)
        stdout, _ = proc.communicate()
    try:
        summary = json.loads(stdout.decode(errors="replace"))
    except ValueError:
        summary = None
    if not isinstance(summary, dict) or not summary.get("run_id"):
        # the run never started (exit 2: a bad bot or config): its one line is the reason
        reason = (summary or {}).get("reason") if isinstance(summary, dict) else ""
        summary = {"bot": job.bot, "run_id": "", "status": "error", "reason": reason or _last_line(log)}
    return _row(summary, job, log, proc.returncode)


def _row(summary: dict[str, Any], job: FleetRun, log: Path, code: int) -> dict[str, object]:
    summary.setdefault("repo_root", str(job.repo))
    out = row(summary)
    out.update(exit_code=code, log=str(log), repo=str(job.repo))
    return out


def _last_line(log: Path) -> str:
    lines = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    return lines[-1] if lines else "no output"


def fleet_exit_code(rows: list[dict[str, Any]]) -> int:
    """0 only when every run exited 0; the runs' own code when all that failed share one, else 1."""
    failed = {int(r["exit_code"]) for r in rows if r["exit_code"] != EXIT_OK}
    if not failed:
        return EXIT_OK
    return failed.pop() if len(failed) == 1 else EXIT_FAILED
