"""What a confined command costs through the shell tool (issue 36): in the session's sandbox server, in a
sandbox of its own (the spare path setup and verification still use), and bare (plain `bash -c`, no
openbot), idle and with one CPU-bound neighbour this script starts itself.

Each command runs through `ShellTool.run` in-process, one after another with no model in between (so a
spare started after a command is waited for by the next: the worst case, an instant model). The variants
are interleaved round by round, so a busy machine slows them alike; medians of the wall time per
command are printed, with the 1-minute load average. Usage:

    python scripts/bench_served.py [rounds] ["command" ...]
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from openbot.agent.tools.base import ToolContext  # noqa: E402
from openbot.agent.tools.shell import ShellTool  # noqa: E402
from openbot.events import ListSink  # noqa: E402
from openbot.sandbox import policy_for_run  # noqa: E402

COMMANDS = ["true", "git status --short", "ls -la; date +%Y", "python3 -c 'print(1 + 1)'"]


def _context(tmp: Path) -> ToolContext:
    repo = tmp / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    policy = policy_for_run(
        "workspace-write", worktree=repo, common_dir=repo / ".git", worktree_admin_dir=None,
        tmp_dir=tmp / "t", skills_dir=None, network=False,
    )  # fmt: skip
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/")}
    return ToolContext(workdir=repo, session_dir=tmp / "s", env=env, sink=ListSink(), sandbox=policy)


def _timed(run: object) -> float:
    started = time.perf_counter()
    run()  # type: ignore[operator]
    return (time.perf_counter() - started) * 1000


def measure(ctx: ToolContext, command: str, rounds: int) -> dict[str, float]:
    served, own = ShellTool(serve=True), ShellTool(serve=False)
    for tool in (served, own):
        tool.run({"command": "true"}, ctx, "warm")
    times: dict[str, list[float]] = {"server": [], "sandbox each": [], "bare": []}
    bare = ["bash", "-c", command]
    for n in range(rounds):
        times["server"].append(_timed(lambda n=n: served.run({"command": command}, ctx, f"s{n}")))
        times["sandbox each"].append(_timed(lambda n=n: own.run({"command": command}, ctx, f"o{n}")))
        times["bare"].append(_timed(lambda: subprocess.run(bare, cwd=ctx.workdir, capture_output=True)))
    served.close()
    own.close()
    return {k: statistics.median(v) for k, v in times.items()}


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 21
    commands = sys.argv[2:] or COMMANDS
    print("| pass | command | server | sandbox each | bare | load |\n|---|---|---:|---:|---:|---:|")
    for label in ("idle", "neighbour"):
        neighbour = None
        if label == "neighbour":
            neighbour = subprocess.Popen([sys.executable, "-c", "while True: pass"])
            time.sleep(0.3)
        try:
            with tempfile.TemporaryDirectory(prefix="bench-served-") as tmp:
                ctx = _context(Path(tmp))
                for command in commands:
                    m = measure(ctx, command, rounds)
                    load = os.getloadavg()[0]
                    cells = " | ".join(f"{m[k]:.1f} ms" for k in ("server", "sandbox each", "bare"))
                    print(f"| {label} | `{command}` | {cells} | {load:.2f} |", flush=True)
        finally:
            if neighbour is not None:
                neighbour.kill()
                neighbour.wait()


if __name__ == "__main__":
    main()
