"""What the sandbox costs: the launcher per command, and a 100-command scripted run, before and after
bubblewrap.

1. Per command: `bash -c true` plain, under Landlock only (the launcher as it was before bubblewrap, plus
   its new capability drop), under bubblewrap only, and under both walls (what a run uses now). The
   variants are interleaved round by round, so a busy machine slows them alike; medians are printed.
2. A whole run: `openbot run` of a scripted bot making 100 `true` commands (10 turns of 10), timed end to
   end, with `OPENBOT_SANDBOX_FORCE_UNAVAILABLE=bwrap` + `sandbox_fallback = "warn"` (Landlock only: the
   sandbox before bubblewrap) and as shipped (both walls). Interleaved too.

Prints markdown tables for docs/BENCHMARKS.md. Usage: python scripts/bench_sandbox.py [rounds] [runs]
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from openbot.sandbox import kernel_support, policy_for_run  # noqa: E402


def _time(argv: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, check=True, env=env, stdin=subprocess.DEVNULL)
    return (time.perf_counter() - started) * 1000


def per_command(rounds: int, tmp: Path) -> dict[str, float]:
    policy = policy_for_run(
        "workspace-write", worktree=tmp / "w", common_dir=None, worktree_admin_dir=None,
        tmp_dir=tmp / "t", skills_dir=None, network=False,
    )  # fmt: skip
    cmd = ["bash", "-c", "true"]
    variants = {
        "plain": cmd,
        "Landlock only (before)": replace(policy, bwrap="").wrap(cmd),
        "bubblewrap only": replace(policy, landlock=False).wrap(cmd),
        "bubblewrap + Landlock (now)": policy.wrap(cmd),
    }
    env = {"PATH": os.environ["PATH"], **policy.env()}
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(rounds):
        for name, argv in variants.items():
            times[name].append(_time(argv, env))
    return {name: statistics.median(t) for name, t in times.items()}


def _bot(home: Path, name: str, config: str) -> None:
    calls = [{"name": "shell", "input": {"command": "true"}} for _ in range(10)]
    responses = [{"text": "", "tool_calls": calls} for _ in range(10)]
    done = {"name": "session_complete", "input": {"summary": "done", "action": "discard"}}
    responses.append({"text": "", "tool_calls": [done]})
    bot = home / "bots" / name
    bot.mkdir(parents=True)
    (bot / "script.json").write_text(json.dumps({"responses": responses}))
    (bot / "config.md").write_text(
        f'+++\nmodel = "scripted:script.json"\nsleep_secs = 0\n{config}\n+++\n\nWork.\n'
    )


def whole_run(runs: int, tmp: Path) -> dict[str, float]:
    repo = tmp / "repo"
    repo.mkdir()
    git = ["git", "-c", "user.name=b", "-c", "user.email=b@example.com"]
    subprocess.run([*git, "init", "-q", "-b", "main"], cwd=repo, check=True)
    (repo / "README.md").write_text("# bench\n")
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "init"], cwd=repo, check=True)
    home = tmp / "openbot-home"
    _bot(home, "after", "")
    _bot(home, "before", 'sandbox_fallback = "warn"')
    base = {**os.environ, "OPENBOT_HOME": str(home)}
    variants = {
        "Landlock only (before)": ("before", {**base, "OPENBOT_SANDBOX_FORCE_UNAVAILABLE": "bwrap"}),
        "bubblewrap + Landlock (now)": ("after", base),
    }
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(runs):
        for name, (bot, env) in variants.items():
            argv = [sys.executable, "-m", "openbot", "run", bot]
            started = time.perf_counter()
            subprocess.run(argv, cwd=repo, env=env, check=True, capture_output=True)
            times[name].append(time.perf_counter() - started)
    return {name: statistics.median(t) for name, t in times.items()}


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    support = kernel_support()
    if not (support.bwrap and support.filesystem):
        sys.exit(f"needs bubblewrap and Landlock: {support.bwrap_detail}; {support.detail}")
    with tempfile.TemporaryDirectory() as d:
        cmd = per_command(rounds, Path(d))
    print(f"Per command, median of {rounds} interleaved rounds (`bash -c true`):\n")
    print("| | ms | over plain |\n|---|---:|---:|")
    for name, ms in cmd.items():
        print(f"| {name} | {ms:.1f} | {ms - cmd['plain']:+.1f} |")
    with tempfile.TemporaryDirectory() as d:
        run = whole_run(runs, Path(d))
    print(f"\n`openbot run`, 100 commands, median of {runs} interleaved runs:\n")
    print("| | wall time s | per command ms |\n|---|---:|---:|")
    for name, secs in run.items():
        print(f"| {name} | {secs:.2f} | {secs * 10:.1f} |")
    print(f"\n{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}, kernel {os.uname().release}")


if __name__ == "__main__":
    main()
