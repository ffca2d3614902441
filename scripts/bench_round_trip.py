"""openbot's own time per tool call: an N-call run of `true` commands against the loopback Anthropic server.

The real CLI (`python -m openbot run`, its own Messages API client) talks to `openbot.testing.fakeapi`
(which answers with TCP_NODELAY, as a real API edge does, and at once). The time between two consecutive
model requests is one round trip: openbot receiving and judging the reply, running `true` through the
shell tool (sandbox included), logging it, and sending the next request. A bare HTTP loop (httpx2 and
json alone: no tools, no logs, a conversation growing the same way, cache breakpoints set the same way)
against the same server gives the model side's share (HTTP, the stand-in server); until openbot spoke the
API itself (commit 9800e30) the baseline was a bare SDK loop, which costs more per call. "Own" subtracts
the baseline and what `bash -c true` costs on its own (a subprocess, median of 200): what openbot adds per
tool call beyond the command, sandbox included.
Reported per segment of the run (calls 1–10, the middle, the last 10), so growth along the run shows.

`--latency-ms` makes the server wait that long before each answer, as a real model does before its
first token (and subtracts it): work openbot does meanwhile — booting the next command's sandbox —
is then off the round trip, as in a real run.

Usage: python scripts/bench_round_trip.py [--calls 200] [--sandbox workspace-write] [--rounds 3]
       [--latency-ms 0]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from openbot.testing.fakeapi import FakeAnthropic, Reply, reply  # noqa: E402

MODEL = "claude-sonnet-5-5"


def answer(calls: int, arrivals: list[float], latency: float = 0.0) -> Any:
    lock = threading.Lock()

    def respond(body: dict[str, Any]) -> Reply:
        with lock:
            arrivals.append(time.monotonic())
            n = len(arrivals)
        time.sleep(latency)  # a real model takes this long to its first token
        if n <= calls:  # each command distinct: the same call five times over is "stuck"
            return reply("", [{"name": "shell", "input": {"command": f"true {n}"}, "id": f"toolu_rt_{n}"}])
        done = {"summary": "done", "action": "discard"}
        return reply("", [{"name": "session_complete", "input": done, "id": "toolu_rt_done"}])

    return respond


def bare_command_ms() -> float:
    times = []
    for _ in range(200):
        started = time.perf_counter()
        subprocess.run(["bash", "-c", "true"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def one_run(calls: int, sandbox: str, latency: float) -> list[float]:
    """The round trips of one run, in ms (request k → request k+1), less the model's simulated latency."""
    arrivals: list[float] = []
    respond = answer(calls, arrivals, latency)
    with tempfile.TemporaryDirectory(prefix="bench-rt-") as tmp, FakeAnthropic(respond=respond) as api:
        home, repo = Path(tmp) / "home", Path(tmp) / "repo"
        env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b"}
        env |= {"GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b"}
        subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
        (repo / "README.md").write_text("bench\n")
        subprocess.run(["git", "add", "-A"], cwd=repo, check=True, env=env)
        subprocess.run(["git", "commit", "-qm", "init"], cwd=repo, check=True, env=env)
        bot = home / "bots" / "rt"
        bot.mkdir(parents=True)
        config = f'model = "{MODEL}"\nmax_iterations = 1\nsleep_secs = 0\nsandbox = "{sandbox}"\n'
        config += f"max_turn_steps = {calls + 10}\n"
        (bot / "config.md").write_text(f"+++\n{config}+++\nBench.\n")
        env |= {
            "OPENBOT_HOME": str(home),
            "ANTHROPIC_BASE_URL": api.base_url,
            "ANTHROPIC_API_KEY": "sk-ant-rt-0",
        }
        out = subprocess.run(
            [sys.executable, "-m", "openbot", "run", "rt"], cwd=repo, env=env, capture_output=True, text=True
        )
        if out.returncode != 0 or len(arrivals) != calls + 1:
            raise SystemExit(
                f"run failed ({out.returncode}, {len(arrivals)} requests):\n{out.stderr[-2000:]}"
            )
    return [(b - a - latency) * 1000 for a, b in zip(arrivals, arrivals[1:], strict=False)]


HTTP_LOOP = """
import json, os, sys, httpx2
client = httpx2.Client()
url = os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages"
headers = {"Authorization": "Bearer " + os.environ["ANTHROPIC_API_KEY"], "anthropic-version": "2026-10-21",
           "content-type": "application/json", "accept": "text/event-stream"}
mark = {"type": "ephemeral"}
tools = [{"name": "shell", "description": "Run a command. " * 60, "cache_control": mark, "input_schema":
          {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}]
system = [{"type": "text", "text": "You are a bot. " * 500, "cache_control": mark}]
messages = [{"role": "user", "content": [{"type": "text", "text": "Bench."}]}]

def marked(messages):  # breakpoints as openbot sets them: the newest message, the user message before it
    out = list(messages)
    users = [i for i, m in enumerate(out[:-1]) if m["role"] == "user"]
    for i in [len(out) - 1, *users[-1:]]:
        blocks = [dict(b) for b in out[i]["content"]]
        blocks[-1]["cache_control"] = mark
        out[i] = {**out[i], "content": blocks}
    return out

while True:
    body = {"model": sys.argv[1], "max_tokens": 8192, "system": system, "tools": tools,
            "messages": marked(messages), "stream": True}
    blocks, parts = [], {}
    with client.stream("POST", url, content=json.dumps(body), headers=headers) as response:
        for line in response.iter_lines():
            if not line.startswith("data:"):
                continue
            event = json.loads(line[5:])
            if event["type"] == "content_block_start":
                blocks.append(dict(event["content_block"]))
            elif event["type"] == "content_block_delta" and event["delta"]["type"] == "input_json_delta":
                parts[event["index"]] = parts.get(event["index"], "") + event["delta"]["partial_json"]
    for i, text in parts.items():
        blocks[i]["input"] = json.loads(text)
    calls = [b for b in blocks if b["type"] == "tool_use"]
    if not calls or calls[0]["name"] != "shell":
        break
    messages.append({"role": "assistant", "content": blocks})
    messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": calls[0]["id"],
                                                  "content": "exit code: 0"}]})
"""


def http_baseline(calls: int, latency: float) -> list[float]:
    """The same round trips made by a bare HTTP loop (httpx2 and json only: no tool run, nothing logged):
    the model side's share."""
    arrivals: list[float] = []
    with FakeAnthropic(respond=answer(calls, arrivals, latency)) as api:
        env = {**os.environ, "ANTHROPIC_BASE_URL": api.base_url, "ANTHROPIC_API_KEY": "sk-ant-rt-0"}
        subprocess.run([sys.executable, "-c", HTTP_LOOP, MODEL], env=env, check=True)
    return [(b - a - latency) * 1000 for a, b in zip(arrivals, arrivals[1:], strict=False)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--sandbox", default="workspace-write")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--latency-ms", type=float, default=0, help="the model's time to answer")
    args = parser.parse_args()
    # A pip-installed openbot has its bytecode compiled; with PYTHONDONTWRITEBYTECODE set (as on some CI
    # machines) every run would compile its ~400 modules again, which no installed copy does.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    runs, loops = [], []
    for _ in range(args.rounds):  # interleaved: a busy machine slows both alike
        runs.append(one_run(args.calls, args.sandbox, args.latency_ms / 1000))
        loops.append(http_baseline(args.calls, args.latency_ms / 1000))
    bare = bare_command_ms()
    n = args.calls
    mid = n // 2
    segments = [
        ("calls 1–10", 0, 10),
        (f"calls {mid - 4}–{mid + 5}", mid - 5, mid + 5),
        (f"calls {n - 9}–{n}", n - 10, n),
    ]
    print(
        f"sandbox {args.sandbox}; model latency {args.latency_ms:g} ms (subtracted); `bash -c true` alone:"
        f" {bare:.1f} ms; load {os.getloadavg()[0]:.2f}"
    )
    print("| segment | openbot round trip | bare HTTP loop | openbot's own, beyond it and `bash -c true` |")
    print("|---|---:|---:|---:|")
    for label, lo, hi in [*segments, ("all", 0, n)]:
        med = statistics.median(statistics.median(r[lo:hi]) for r in runs)
        base = statistics.median(statistics.median(r[lo:hi]) for r in loops)
        print(f"| {label} | {med:.1f} ms | {base:.1f} ms | {med - base - bare:.1f} ms |")


if __name__ == "__main__":
    main()
