"""openbot's own time per model call along a long run, and the end of a run, against the loopback API.

The real CLI (`python -m openbot run`, its own HTTP client, the default sandbox) talks to
`openbot.testing.fakeapi`, which answers at once and timestamps each request: when it had fully arrived
and when the last byte of its answer was written. What lies between an answer and the next request is
openbot's alone (reading the reply, running the tool, writing events and the conversation, building and
sending the next request): the model's time is not in it. Each call asks for one shell command printing
`--output-bytes` characters, so the conversation grows as a working run's does (below the compaction mark).

Reported: that own time at calls 1, 50, 100 and 200 (the median of the ten calls around each, then the
median over rounds), and the end of the run: from the answer holding `session_complete` to the exit of the
`openbot run` process (`--verify CMD` gives the bot that verify command, run at session_complete).

Usage: python scripts/bench_per_call.py [--calls 200] [--rounds 3] [--output-bytes 1000]
       [--sandbox workspace-write] [--verify true] [--action discard] [--json FILE]
       python scripts/bench_per_call.py --build-only [--calls 200] [--rounds 5]: the request's build alone
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from openbot.testing.fakeapi import FakeAnthropic, Reply, reply  # noqa: E402

MODEL = "claude-sonnet-5-5"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "b",
    "GIT_AUTHOR_EMAIL": "b@b",
    "GIT_COMMITTER_NAME": "b",
    "GIT_COMMITTER_EMAIL": "b@b",
}


def answer(calls: int, output_bytes: int, action: str = "discard") -> Any:
    state = {"n": 0}

    def respond(body: dict[str, Any]) -> Reply:
        state["n"] += 1
        n = state["n"]
        if n <= calls:  # each command distinct: the same call five times over is "stuck"
            command = f"printf '%0{output_bytes}d' {n}"
            return reply("", [{"name": "shell", "input": {"command": command}, "id": f"toolu_pc_{n}"}])
        done = {"summary": "done", "action": action}
        return reply("", [{"name": "session_complete", "input": done, "id": "toolu_pc_done"}])

    return respond


def make_repo(repo: Path) -> None:
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    (repo / "README.md").write_text("bench\n")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", "init"], cwd=repo, check=True, env=env)


def undone(calls: list[Any], output_bytes: int) -> list[str]:
    """Each command whose result, as the model got it in the next request, is not a run that exited 0 and
    printed what the command prints (its number, zero-padded)."""
    problems = []
    for n, request in enumerate(calls[1:], start=1):
        results = [
            block
            for message in request.body["messages"]
            if isinstance(message.get("content"), list)
            for block in message["content"]
            if block.get("type") == "tool_result" and block.get("tool_use_id") == f"toolu_pc_{n}"
        ]
        content = results[-1].get("content") if results else None
        text = content if isinstance(content, str) else json.dumps(content)
        if not results or results[-1].get("is_error") or "exit code: 0" not in text:
            problems.append(f"command {n} did not run, or failed: {text[:200]!r}")
        elif f"{n:0{output_bytes}d}"[-12:] not in text:
            problems.append(f"command {n}'s output is not in its result: {text[:200]!r}")
    return problems


def tree_cpu(before: resource.struct_rusage) -> float:
    """CPU (user + sys) of everything the run started since `before`: this script is a child subreaper
    (main), so what openbot orphaned (bwrap's inits, its detached rm) is reaped here and counted."""
    while True:
        try:
            os.wait()
        except ChildProcessError:
            break
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def one_run(args: argparse.Namespace) -> dict[str, Any]:
    """Own time per call (ms, calls 1..N: answer k → request k+1) and the end of the run (ms)."""
    with tempfile.TemporaryDirectory(prefix="bench-pc-") as tmp:
        home, repo = Path(tmp) / "home", Path(tmp) / "repo"
        make_repo(repo)
        bot = home / "bots" / "pc"
        bot.mkdir(parents=True)
        config = f'model = "{MODEL}"\nmax_iterations = 1\nsleep_secs = 0\nsandbox = "{args.sandbox}"\n'
        config += f"max_turn_steps = {args.calls + 10}\n"
        if args.verify:
            config += f"verify = [{json.dumps(args.verify)}]\n"
        (bot / "config.md").write_text(f"+++\n{config}+++\nBench.\n")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        with FakeAnthropic(respond=answer(args.calls, args.output_bytes, args.action)) as api:
            env = {**os.environ, **GIT_ENV, "OPENBOT_HOME": str(home)}
            env |= {"ANTHROPIC_BASE_URL": api.base_url, "ANTHROPIC_API_KEY": "sk-ant-pc-0"}
            proc = subprocess.Popen(
                [sys.executable, "-m", "openbot", "run", "pc"],
                cwd=repo,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            out, err = proc.communicate()
            exited = time.monotonic()
            cpu = tree_cpu(before)
            calls = [r for r in api.requests if r.path.split("?")[0] == "/v1/messages"]
        if proc.returncode != 0 or len(calls) != args.calls + 1:
            raise SystemExit(f"run failed ({proc.returncode}, {len(calls)} requests):\n{err[-2000:]}")
        if problems := undone(calls, args.output_bytes):
            raise SystemExit(
                f"the run did not do the work, no figure: {problems[0]} ({len(problems)} in all)"
            )
        own = [(b.received - a.answered) * 1000 for a, b in zip(calls, calls[1:], strict=False)]
        sizes = [len(r.raw) for r in calls]
        end_ms = (exited - calls[-1].answered) * 1000
        return {"own_ms": own, "end_ms": end_ms, "request_bytes": sizes, "cpu_s": cpu}


def build_costs(calls: int, output_bytes: int, fresh: bool) -> list[float]:
    """In-process, the model's time left out entirely: ms to build and encode request k of the same run
    (the backend's kept `Prepared`, or with `fresh` a new one per call, as every call did before)."""
    from openbot.agent.models.base import ModelRequest
    from openbot.agent.models.params import Prepared, build_params, encode_body
    from openbot.agent.tools.registry import default_tools, tool_specs
    from openbot.state.messages import Message

    specs = tool_specs(default_tools())
    messages: list[Message] = [{"role": "user", "content": [{"type": "text", "text": "Bench."}]}]
    kept, costs = Prepared(), []
    for n in range(1, calls + 1):
        started = time.perf_counter()
        params = build_params(MODEL, ModelRequest("You are a bot. " * 400, specs, messages), None,
                              Prepared() if fresh else kept)  # fmt: skip
        encode_body({**params, "stream": True}).encode()
        costs.append((time.perf_counter() - started) * 1000)
        use = {"type": "tool_use", "id": f"t{n}", "name": "shell", "input": {"command": f"printf {n}"}}
        messages.append({"role": "assistant", "content": [{"type": "text", "text": f"call {n}"}, use]})
        result = {"type": "tool_result", "tool_use_id": f"t{n}", "content": f"{n:0{output_bytes}d}"}
        messages.append({"role": "user", "content": [result]})
    return costs


def window(own: list[float], call: int) -> list[float]:
    lo = max(0, min(call - 5, len(own) - 10))
    return own[lo : lo + 10]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--output-bytes", type=int, default=1000)
    parser.add_argument("--sandbox", default="workspace-write")
    parser.add_argument("--verify", default="", help="a verify command for the bot (default: none)")
    parser.add_argument(
        "--action", default="discard", help="session_complete's action (verify skips discard)"
    )
    parser.add_argument("--json", default="", help="keep every run's figures in this file")
    parser.add_argument("--build-only", action="store_true", help="only the request's build, in-process")
    args = parser.parse_args()
    if args.build_only:
        return print_builds(args)
    # A pip-installed openbot has its bytecode compiled; with PYTHONDONTWRITEBYTECODE set every run would
    # compile its modules again, which no installed copy does.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    import ctypes

    ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER: openbot's orphans are reaped here
    runs = [one_run(args) for _ in range(args.rounds)]
    marks = [c for c in (1, 50, 100, 200, args.calls) if c <= args.calls]
    marks = sorted(set(marks))
    print(
        f"{args.calls} calls, {args.output_bytes} B per output, sandbox {args.sandbox}, verify "
        f"{args.verify or 'none'}, action {args.action}, {args.rounds} rounds, load {os.getloadavg()[0]:.2f}"
    )
    print("| call | openbot's own time (median ms) | request size (kB) |")
    print("|---:|---:|---:|")
    for call in marks:
        med = statistics.median(statistics.median(window(r["own_ms"], call)) for r in runs)
        size = runs[0]["request_bytes"][call - 1] / 1000
        print(f"| {call} | {med:.1f} | {size:.0f} |")
    ends = [r["end_ms"] for r in runs]
    print(f"end of run (session_complete answered → exit): median {statistics.median(ends):.0f} ms, {ends}")
    cpus = [round(r["cpu_s"], 2) for r in runs]
    print(
        f"CPU of the whole process tree (orphans reaped here): median {statistics.median(cpus):.2f} s, {cpus}"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(runs))


def print_builds(args: argparse.Namespace) -> None:
    size = args.output_bytes
    rounds = [
        (build_costs(args.calls, size, False), build_costs(args.calls, size, True))
        for _ in range(args.rounds)
    ]
    print(
        f"building and encoding request k in-process ({args.output_bytes} B per output), {args.rounds} rounds"
    )
    print("| call | kept (params.Prepared) | fresh each call (before) |")
    print("|---:|---:|---:|")
    for call in sorted({c for c in (1, 50, 100, 200, args.calls) if c <= args.calls}):
        kept = statistics.median(statistics.median(window(k, call)) for k, _ in rounds)
        fresh = statistics.median(statistics.median(window(f, call)) for _, f in rounds)
        print(f"| {call} | {kept:.2f} ms | {fresh:.2f} ms |")


if __name__ == "__main__":
    main()
