"""What reading the Rust openbot's sessions costs `openbot history` (see docs/BENCHMARKS.md, "Rust openbot
history").

    python scripts/bench_legacy_history.py [--sessions N] [--runs R]

Three temp OPENBOT_HOMEs with one bot in one repository: N openbot sessions; N openbot sessions and N Rust
session directories (`<uuid>-sN/metadata.json`, the Rust tool's SessionRecord); N openbot sessions and N
older one-file Rust records (`<id>.json`, numbered from inside, so every listing reads them all). Each
`openbot history bench` (the 20 newest) runs as a fresh subprocess, interleaved round by round; medians of
wall and CPU time (user + sys).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

THREAD = "019c8f2e-5a1b-7c3d-9e4f-0a1b2c3d4e5f"


def _record(number: int, session_id: str) -> str:
    return json.dumps(
        {
            "session_id": session_id,
            "session_number": number,
            "started_at": "2026-02-24T10:15:30.123456789Z",
            "duration_secs": 95,
            "model": "gpt-5.3-codex",
            "prompt_summary": "Find flaky tests.",
            "response_summary": "Fixed one.",
            "action": None,
            "tokens": None,
            "command_count": 2,
        },
        indent=2,
    )


def _home(tmp: Path, name: str, slug: str, n: int, rust: str) -> Path:
    home = tmp / name
    history = home / "bots" / "bench" / "workspaces" / slug / "history"
    history.mkdir(parents=True)
    (home / "bots" / "bench" / "config.md").write_text("+++\n+++\nBench.\n")
    offset = n if rust else 0
    for i in range(1, n + 1):
        own = history / f"{offset + i:06d}-20260101T000000Z"
        own.mkdir()
        meta = {
            "session_id": own.name,
            "session_number": offset + i,
            "run_id": "r",
            "started_at": "2026-01-01",
        }
        (own / "metadata.json").write_text(json.dumps(meta))
        if rust == "dirs":
            d = history / f"{THREAD}-s{i}"
            d.mkdir()
            (d / "metadata.json").write_text(_record(i, d.name))
        elif rust == "files":
            session_id = f"{THREAD[:-6]}{i:06d}"
            (history / f"{session_id}.json").write_text(_record(i, session_id))
    return home


def _time(home: Path, repo: Path) -> tuple[float, float]:
    env = {**os.environ, "OPENBOT_HOME": str(home)}
    before, start = os.times(), time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "openbot", "history", "bench"], cwd=repo, env=env, capture_output=True
    )
    wall, after = time.perf_counter() - start, os.times()
    if out.returncode != 0:
        raise SystemExit(out.stderr.decode())
    return wall, (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=3000)
    ap.add_argument("--runs", type=int, default=11)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        repo = tmp / "app"
        repo.mkdir()
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        os.environ["OPENBOT_HOME"] = str(tmp / "probe")
        from openbot.state.project import resolve_project

        slug, n = resolve_project(repo).slug, args.sessions
        cases = {
            f"{n:,} openbot sessions": _home(tmp, "own", slug, n, ""),
            f"+ {n:,} Rust session directories": _home(tmp, "dirs", slug, n, "dirs"),
            f"+ {n:,} older Rust one-file records": _home(tmp, "files", slug, n, "files"),
        }
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
        for _ in range(args.runs):
            for name, home in cases.items():
                times[name].append(_time(home, repo))
    print("| history of | wall s | CPU s |\n|---|---:|---:|")
    for name, runs in times.items():
        wall, cpu = statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)
        print(f"| {name} | {wall:.3f} | {cpu:.3f} |")


if __name__ == "__main__":
    main()
