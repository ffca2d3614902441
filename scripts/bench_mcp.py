"""What an MCP server costs a run: start-up (spawn, SDK import, initialize, tools/list) and the round
trip of one tool call through openbot's adapter (redaction, compaction, the `mcp_call` event), for the
SDK test server over stdio, unconfined and inside the workspace-write sandbox.

    python scripts/bench_mcp.py [calls]
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from openbot.agent.tools.base import ToolContext
from openbot.agent.tools.mcp import McpHub
from openbot.agent.tools.mcp.launch import launch_for
from openbot.config.mcp import parse_servers
from openbot.events import ListSink
from openbot.sandbox import SandboxPolicy, policy_for_run

SERVER = {"command": "${OPENBOT_PYTHON}", "args": ["-m", "openbot.testing.mcpserver"]}


def measure(work: Path, sandbox: SandboxPolicy | None, calls: int) -> tuple[float, list[float]]:
    specs = parse_servers({"bench": SERVER}, "bench")
    hub = McpHub(
        specs,
        lambda s: launch_for(
            s,
            environ=os.environ,
            base_env={"PATH": os.environ["PATH"]},
            sandbox=sandbox,
            workdir=work,
            bot_dir=work,
        ),
        work / "logs",
    )
    started = time.perf_counter()
    hub.start()
    startup = time.perf_counter() - started
    [echo] = [t for t in hub.tools() if t.spec.name == "bench__echo"]
    ctx = ToolContext(workdir=work, session_dir=work, env={}, sink=ListSink())
    times = []
    for i in range(calls):
        t = time.perf_counter()
        out = echo.run({"text": f"call {i}"}, ctx, f"toolu_{i}")
        times.append((time.perf_counter() - t) * 1000)
        assert out.content == f"call {i}", out
    hub.close()
    return startup, times


def main() -> None:
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    t = time.perf_counter()
    import mcp.client.session  # noqa: F401  (what a run pays once, before the first server starts)

    print(f"importing the SDK in openbot: {time.perf_counter() - t:.2f} s (once per run, only with servers)")
    print("| server | start-up (s) | call median (ms) | call p95 (ms) |")
    print("|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        policy = policy_for_run(
            "workspace-write",
            worktree=work,
            common_dir=None,
            worktree_admin_dir=None,
            tmp_dir=work / "tmp",
            skills_dir=None,
            network=False,
        )
        for label, sandbox in (("stdio, unconfined", None), ("stdio, workspace-write sandbox", policy)):
            startup, times = measure(work, sandbox, calls)
            p95 = sorted(times)[int(len(times) * 0.95) - 1]
            print(f"| {label} | {startup:.2f} | {statistics.median(times):.2f} | {p95:.2f} |")


if __name__ == "__main__":
    main()
