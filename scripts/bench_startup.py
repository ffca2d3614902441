"""Start-up time of the fast commands against a bare typer app (see docs/BENCHMARKS.md, "Start-up").

    python scripts/bench_startup.py [--runs N]

Each command runs as a fresh subprocess, interleaved round by round so background load hits all of them
alike; the median wall time counts. Setup: a temp OPENBOT_HOME with a bot written as config.md, a temp
git repo, and 3,000 sessions of history written directly as metadata.json.

Baselines: a typer app that does nothing, the same app's `--help` (typer renders help with rich, which
any `--help` pays) and the app with one str argument. Each openbot command is also compared with its
like-for-like baseline, on CPU time as well as wall time (CPU time is what a loaded, shared machine
does not distort); exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BARE_TYPER = """\
import typer

app = typer.Typer()


@app.command()
def main() -> None:
    pass


app()
"""

SESSIONS = 3000
NO_PARAMS = "bare typer app, no parameters"
BARE_HELP = "bare typer app --help"
ONE_ARG = "bare typer app, one str argument"
HISTORY = f"openbot history bench ({SESSIONS:,} sessions)"


def _openbot() -> list[str]:
    """The installed console script, as a user runs it; `python -m openbot` when it is not installed."""
    script = Path(sys.executable).parent / "openbot"
    return [str(script)] if script.exists() else [sys.executable, "-m", "openbot"]


def _setup(tmp: Path) -> tuple[Path, dict[str, str]]:
    home, repo = tmp / "home", tmp / "app"
    env = {**os.environ, "OPENBOT_HOME": str(home)}
    for who in ("AUTHOR", "COMMITTER"):
        env[f"GIT_{who}_NAME"], env[f"GIT_{who}_EMAIL"] = "bench", "bench@example.com"
    (home / "bots" / "bench").mkdir(parents=True)
    (home / "bots" / "bench" / "config.md").write_text(
        '+++\ndescription = "benchmark bot"\n+++\nDo nothing.\n'
    )
    repo.mkdir()
    (repo / "README.md").write_text("# bench\n")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "init"]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True)

    os.environ["OPENBOT_HOME"] = str(home)  # the helpers below compute paths from it
    from openbot import paths
    from openbot.state.history import SessionMeta
    from openbot.state.memory import MemoryStore
    from openbot.state.project import resolve_project

    slug = resolve_project(repo).slug
    store = MemoryStore(paths.memory_file("bench", slug))
    for i in range(20):
        store.set(f"fact-{i}", f"something the bot learned, number {i}")
    root = paths.history_dir("bench", slug)
    for n in range(1, SESSIONS + 1):
        sid = f"{n:06d}-20250101T{n // 3600 % 24:02d}{n // 60 % 60:02d}{n % 60:02d}Z"
        meta = SessionMeta(sid, n, f"run-{n // 10}", "2025-01-01T00:00:00.000Z", duration_secs=61.0)
        meta.status, meta.response_summary = "completed", f"session {n} fixed a thing"
        (root / sid).mkdir(parents=True)
        (root / sid / "metadata.json").write_text(json.dumps(meta.to_dict()))
    return repo, env


def _time(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run; CPU time barely moves when other jobs load the machine."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed with exit code {proc.returncode}")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11, help="interleaved runs per command (at least 9)")
    runs = max(9, parser.parse_args().runs)
    tmp = Path(tempfile.mkdtemp(prefix="openbot-bench-"))
    try:
        repo, env = _setup(tmp)
        bare = tmp / "bare_typer.py"
        bare.write_text(BARE_TYPER)
        bare_arg = tmp / "bare_typer_arg.py"
        bare_arg.write_text(BARE_TYPER.replace("def main()", "def main(name: str)"))
        ob = _openbot()
        commands = {
            NO_PARAMS: [sys.executable, str(bare)],
            BARE_HELP: [sys.executable, str(bare), "--help"],
            ONE_ARG: [sys.executable, str(bare_arg), "x"],
            "openbot --help": [*ob, "--help"],
            "openbot memory bench show": [*ob, "memory", "bench", "show"],
            HISTORY: [*ob, "history", "bench"],
        }
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for cmd in commands.values():  # warm the page cache once
            _time(cmd, repo, env)
        for _ in range(runs):
            for name, cmd in commands.items():
                times[name].append(_time(cmd, repo, env))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return _report(times, runs)


def _report(times: dict[str, list[tuple[float, float]]], runs: int) -> int:
    """Print the markdown table; 1 when a target is missed.

    Ratio targets are judged on CPU time against the like-for-like baseline, because wall time on a shared
    machine measures the neighbours; the history target is absolute (0.3 s of CPU)."""
    wall = {name: statistics.median(w for w, _ in t) for name, t in times.items()}
    cpu = {name: statistics.median(c for _, c in t) for name, t in times.items()}
    like = {"openbot --help": BARE_HELP, "openbot memory bench show": ONE_ARG, HISTORY: ONE_ARG}
    print(f"{runs} interleaved runs per command, medians (python {sys.version.split()[0]})\n")
    columns = ["command", "wall s", "CPU s", "wall × no-param", "wall × like-for-like", "CPU × like-for-like"]
    print("| " + " | ".join([*columns, "target", "met"]) + " |")
    print("|---|---:|---:|---:|---:|---:|---|---|")
    missed = 0
    for name in times:
        base = like.get(name)
        if name == HISTORY:
            target, ok = "CPU < 0.300 s", cpu[name] < 0.3
        elif base:
            target, ok = "CPU ≤ 1.3× like-for-like", cpu[name] <= 1.3 * cpu[base]
        else:
            target, ok = "", True
        missed += not ok
        cells = [
            f"`{name}`",
            f"{wall[name]:.3f}",
            f"{cpu[name]:.3f}",
            f"{wall[name] / wall[NO_PARAMS]:.2f}",
            f"{wall[name] / wall[base]:.2f}" if base else "",
            f"{cpu[name] / cpu[base]:.2f}" if base else "",
            target,
            "" if not target else ("yes" if ok else "NO"),
        ]
        print("| " + " | ".join(cells) + " |")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
