"""Per-iteration overhead of `openbot run` with an instant scripted model, at 0 vs 3,000 past sessions.

Runs the real CLI (`python -m openbot run`) in a temp repo with a temp OPENBOT_HOME; the model answers
instantly, so the time between consecutive `session_started` events is openbot's own per-iteration cost
(history, memory, skills, prompt, metadata, events). Usage: python scripts/bench_iteration.py [iterations]
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def setup(home: Path, repo: Path, iterations: int) -> None:
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    (repo / "README.md").write_text("bench\n")
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@b",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@b",
    }
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", "init"], cwd=repo, check=True, env=env)
    bot = home / "bots" / "bench"
    bot.mkdir(parents=True)
    # Each iteration acts once (a text-only first reply is re-asked, never an iteration's end) with the
    # cheapest tool, which runs no command, then ends its turn.
    look = {"tool_calls": [{"name": "session_history", "input": {"action": "list"}}]}
    script = {"responses": [r for i in range(iterations) for r in (look, {"text": f"iteration {i} done"})]}
    (bot / "script.json").write_text(json.dumps(script))
    (bot / "config.md").write_text(
        f'+++\nmodel = "scripted:script.json"\nmax_iterations = {iterations}\nsleep_secs = 0\n+++\nBench.\n'
    )


def project_dir(home: Path, repo: Path) -> Path:
    sys.path.insert(0, str(ROOT))
    os.environ["OPENBOT_HOME"] = str(home)
    from openbot.state.project import resolve_project

    return home / "bots" / "bench" / "workspaces" / resolve_project(repo).slug


def fake_history(history: Path, n: int) -> None:
    for i in range(1, n + 1):
        d = history / f"{i:06d}-20260101T000000Z"
        d.mkdir(parents=True)
        meta = {
            "session_id": d.name,
            "session_number": i,
            "run_id": "old",
            "started_at": "2026-01-01T00:00:00Z",
            "status": "completed",
            "response_summary": f"old session {i}",
            "tokens": {},
            "cost_usd": 0,
        }
        (d / "metadata.json").write_text(json.dumps(meta))
        (d / "events.jsonl").write_text('{"type":"message","ts":"x","seq":1,"text":"old"}\n')


def per_iteration_ms(past: int, iterations: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        home, repo = Path(tmp) / "home", Path(tmp) / "repo"
        setup(home, repo, iterations)
        history = project_dir(home, repo) / "history"
        fake_history(history, past)
        env = {**os.environ, "OPENBOT_HOME": str(home)}
        subprocess.run(
            [sys.executable, "-m", "openbot", "run", "bench"],
            cwd=repo,
            env=env,
            check=False,
            stdin=subprocess.DEVNULL,
            capture_output=True,
        )
        starts = []
        for d in sorted(p for p in history.iterdir() if p.is_dir())[past:]:
            first = json.loads((d / "events.jsonl").read_text().splitlines()[0])
            starts.append(datetime.fromisoformat(first["ts"].replace("Z", "+00:00")))
        deltas = [(b - a).total_seconds() * 1000 for a, b in zip(starts, starts[1:], strict=False)]
        return statistics.median(deltas)


def main() -> None:
    iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    rounds = [(per_iteration_ms(0, iterations), per_iteration_ms(3000, iterations)) for _ in range(3)]
    zero = statistics.median(r[0] for r in rounds)
    many = statistics.median(r[1] for r in rounds)
    print("| past sessions | per-iteration overhead (median ms) |")
    print("|---|---|")
    print(f"| 0 | {zero:.1f} |")
    print(f"| 3,000 | {many:.1f} |")
    print(f"\nratio 3,000 / 0: {many / zero:.2f}x (target ≤ 1.25x)")


if __name__ == "__main__":
    main()
