"""Start-up time of the fast commands against a bare typer app (see docs/BENCHMARKS.md, "Start-up").

    python scripts/bench_startup.py [--runs 11]

Each command runs as a fresh subprocess, interleaved round by round so background load hits all of them
alike; the median wall time counts. Setup: a temp OPENBOT_HOME with a bot written as config.md, a temp
git repo, and 3,000 sessions of history written directly as metadata.json. Exits 1 if a target is missed.
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
    env.update(
        {f"GIT_{who}_{what}": val for who in ("AUTHOR", "COMMITTER") for what, val in (("NAME", "B"),)}
    )
    env.update({f"GIT_{who}_EMAIL": "b@example.com" for who in ("AUTHOR", "COMMITTER")})
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
    from openbot.history import SessionMeta
    from openbot.memory import MemoryStore
    from openbot.project import resolve_project

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


def _time(cmd: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return time.perf_counter() - start


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
        times: dict[str, list[float]] = {name: [] for name in commands}
        for cmd in commands.values():  # warm the page cache once
            _time(cmd, repo, env)
        for _ in range(runs):
            for name, cmd in commands.items():
                times[name].append(_time(cmd, repo, env))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return _report(times, runs)


def _report(times: dict[str, list[float]], runs: int) -> int:
    """Print the markdown table; 1 when a target is missed against its like-for-like baseline."""
    med = {name: statistics.median(t) for name, t in times.items()}
    like = {"openbot --help": BARE_HELP, "openbot memory bench show": ONE_ARG, HISTORY: ONE_ARG}
    print(f"{runs} interleaved runs per command, median wall time (python {sys.version.split()[0]})\n")
    print("| command | median s | min s | × no-param app | × like-for-like | target | met |")
    print("|---|---:|---:|---:|---:|---|---|")
    missed = 0
    for name, t in times.items():
        ratio = f"{med[name] / med[like[name]]:.2f}" if name in like else ""
        if name == HISTORY:
            target, ok = "< 0.300 s", med[name] < 0.3
        elif name in like:
            target, ok = "≤ 1.3× like-for-like", med[name] <= 1.3 * med[like[name]]
            target += "" if med[name] <= 1.3 * med[NO_PARAMS] else " (not met vs no-param app)"
        else:
            target, ok = "", True
        missed += not ok
        met = "" if not target else ("yes" if ok else "NO")
        print(
            f"| `{name}` | {med[name]:.3f} | {min(t):.3f} | {med[name] / med[NO_PARAMS]:.2f} | {ratio} | {target} | {met} |"
        )
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
