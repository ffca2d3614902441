"""openbot, Claude Code and Codex side by side: one 16-call scenario against loopback model servers.

Each peer works in a fresh git repository on the same task script: 15 model replies each run one shell
command (the same 15 commands for all), the 16th ends the work. The Anthropic stand-in is
`openbot.testing.fakeapi` (its prompt-cache simulation gives the token figures); Codex gets a minimal
OpenAI Responses stand-in defined here. Both answer with TCP_NODELAY, as a real API edge does. Rounds are
interleaved (the order rotates each round) and ratios are taken per round, then the median, because this
2-core machine is shared. The load average is reported with the figures.

Measured per run: launch → first model request (the first request that offers tools), the loop (first
to last model request: 15 tool round trips), the whole run (launch → exit), tokens sent (all requests;
call 1), the share of input read from the prompt cache, peak memory (largest RSS of the process tree,
from `wait4` in a wrapper process).

Peers: `npm install -g @anthropic-ai/claude-code @openai/codex`. Claude Code honours ANTHROPIC_BASE_URL;
Codex is pointed at the stand-in with a `model_providers` entry given by `-c` flags.

Usage: python scripts/bench_side_by_side.py [--rounds 5] [--peers openbot,claude,codex] [--json out.json]
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
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from openbot.testing.fakeapi import FakeAnthropic, Reply, reply  # noqa: E402

CALLS = 16
COMMANDS = [
    "ls -la",
    "cat README.md",
    "git status --short",
    "git log --oneline -3",
    "grep -rn 'def ' src | head -20",
    "wc -l src/*.py",
    "python3 -c 'print(1 + 1)'",
    "head -5 src/app.py",
    "echo checking > notes.txt",
    "cat notes.txt",
    "find . -name '*.py' -not -path './.git/*' | sort",
    "git diff --stat",
    "tail -3 src/app.py",
    "date +%Y",
    "rm notes.txt && git status --short",
]
assert len(COMMANDS) == CALLS - 1
TASK = "Look around this repository with the shell, one command at a time, then say done."
MODEL = "claude-sonnet-5-5"
WRAPPER = (
    "import json,resource,subprocess,sys,time\n"
    "t0=time.monotonic()\n"
    "out=open(sys.argv[2],'wb')\n"
    "rc=subprocess.call(sys.argv[3:],stdout=out,stderr=subprocess.STDOUT,stdin=subprocess.DEVNULL)\n"
    "t1=time.monotonic()\n"
    "m=resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
    "open(sys.argv[1],'w').write(json.dumps({'t0':t0,'t1':t1,'rc':rc,'maxrss_kb':m}))\n"
)


class Log:
    """What the stand-ins saw: (arrival time, is a scenario call, prompt tokens, cache-read tokens)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.calls: list[tuple[float, bool, int, int]] = []

    def add(self, t: float, scenario: bool, prompt: int, cached: int) -> None:
        with self.lock:
            self.calls.append((t, scenario, prompt, cached))

    def reset(self) -> list[tuple[float, bool, int, int]]:
        with self.lock:
            calls, self.calls = self.calls, []
        return calls


def tool_results(messages: list[Any]) -> int:
    n = 0
    for m in messages:
        content = m.get("content") if isinstance(m, dict) else None
        for b in content if isinstance(content, list) else []:
            n += isinstance(b, dict) and b.get("type") == "tool_result"
    return n


class AnthropicStandIn(FakeAnthropic):
    """FakeAnthropic answering the scenario to whichever client asks (its shell tool is `shell` for
    openbot, `Bash` for Claude Code), recording each request's arrival and simulated cache usage."""

    log: Log

    def simulate_usage(self, body: dict[str, Any]) -> dict[str, Any]:
        usage = super().simulate_usage(body)
        prompt = (
            usage["input_tokens"] + usage["cache_creation_input_tokens"] + usage["cache_read_input_tokens"]
        )
        self.log.add(body["_arrived"], bool(body.get("tools")), prompt, usage["cache_read_input_tokens"])
        return usage


def anthropic_answer(body: dict[str, Any]) -> Reply:
    body["_arrived"] = time.monotonic()  # before anything else: the request's arrival time
    names = {t.get("name") for t in body.get("tools") or []}
    shell = "shell" if "shell" in names else "Bash" if "Bash" in names else ""
    if not shell:
        return reply("ok")  # a side request (a title, a summary): answered, not a scenario call
    n = tool_results(body.get("messages") or [])
    if n < len(COMMANDS):
        command: dict[str, Any] = {"command": COMMANDS[n]}
        if shell == "Bash":
            command["description"] = "look around"
        return reply("", [{"name": shell, "input": command, "id": f"toolu_bench_{n:02d}"}])
    if shell == "shell":  # openbot ends a session with its session_complete tool
        done = {"summary": "looked around", "action": "discard"}
        return reply("", [{"name": "session_complete", "input": done, "id": "toolu_bench_done"}])
    return reply("done")


def start_anthropic(log: Log) -> AnthropicStandIn:
    api = AnthropicStandIn(respond=anthropic_answer)
    api.log = log
    api.__enter__()
    return api


# ── a minimal OpenAI Responses stand-in for Codex ──────────────────────────────────────────────────


class ResponsesHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    log: Log
    cache: list[str] = []

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        arrived = time.monotonic()
        body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
        if not self.path.split("?")[0].endswith("/responses"):
            self.send_response(404)
            self.send_header("content-length", "0")
            self.end_headers()
            return
        prompt_text = json.dumps([body.get("instructions"), body.get("tools"), body.get("input")])
        prompt, cached = len(prompt_text) // 4, self._cached(prompt_text) // 4
        names = {t.get("name") for t in body.get("tools") or []}
        self.log.add(arrived, "exec_command" in names or "shell" in names, prompt, cached)
        n = sum(1 for i in body.get("input") or [] if i.get("type") == "function_call_output")
        if n < len(COMMANDS) and ("exec_command" in names or "shell" in names):
            name = "exec_command" if "exec_command" in names else "shell"
            args = (
                {"cmd": COMMANDS[n]} if name == "exec_command" else {"command": ["bash", "-lc", COMMANDS[n]]}
            )
            item: dict[str, Any] = {
                "type": "function_call",
                "id": f"fc_{n}",
                "call_id": f"call_{n}",
                "name": name,
                "arguments": json.dumps(args),
                "status": "completed",
            }
        else:
            text = {"type": "output_text", "text": "done", "annotations": []}
            item = {"type": "message", "id": "msg_done", "role": "assistant", "status": "completed"}
            item["content"] = [text]
        self._stream(item, prompt, cached)

    def _cached(self, text: str) -> int:
        """OpenAI caches prompt prefixes automatically (1,024 tokens and up, in 128-token steps)."""
        best = 0
        for old in self.cache:
            k = len(os.path.commonprefix([old, text]))
            best = max(best, k)
        self.cache.append(text)
        tokens = best // 4
        return 0 if tokens < 1024 else (tokens // 128) * 128 * 4

    def _stream(self, item: dict[str, Any], prompt: int, cached: int) -> None:
        usage = {
            "input_tokens": prompt,
            "input_tokens_details": {"cached_tokens": cached},
            "output_tokens": 20,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": prompt + 20,
        }
        response = {"id": "resp_bench", "object": "response", "status": "in_progress", "output": []}
        events = [
            ("response.created", {"type": "response.created", "response": response}),
            (
                "response.output_item.added",
                {"type": "response.output_item.added", "output_index": 0, "item": item},
            ),
            (
                "response.output_item.done",
                {"type": "response.output_item.done", "output_index": 0, "item": item},
            ),
            (
                "response.completed",
                {
                    "type": "response.completed",
                    "response": {**response, "status": "completed", "usage": usage},
                },
            ),
        ]
        data = b"".join(f"event: {e}\ndata: {json.dumps(d)}\n\n".encode() for e, d in events)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(data)))
        self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(data)
        self.close_connection = True


def start_responses(log: Log) -> ThreadingHTTPServer:
    handler = type("Handler", (ResponsesHandler,), {"log": log, "cache": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True).start()
    return server


# ── the peers ──────────────────────────────────────────────────────────────────────────────────────


def git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b"}
    env |= {"GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b"}
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def make_repo(path: Path) -> Path:
    (path / "src").mkdir(parents=True)
    (path / "README.md").write_text("# demo\n\nA small app.\n")
    (path / "src" / "app.py").write_text("".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(40)))
    git(path, "init", "-q", "-b", "main")
    git(path, "add", "-A")
    git(path, "commit", "-qm", "initial")
    return path


QUIET = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
}


def openbot_argv(work: Path, api_url: str, sandbox: str) -> tuple[list[str], dict[str, str]]:
    home = work / "openbot-home"
    bot = home / "bots" / "bench"
    bot.mkdir(parents=True, exist_ok=True)
    config = f'model = "{MODEL}"\nmax_iterations = 1\nsleep_secs = 0\nsandbox = "{sandbox}"'
    (bot / "config.md").write_text(f"+++\n{config}\n+++\n\n{TASK}\n")
    env = {"OPENBOT_HOME": str(home), "ANTHROPIC_BASE_URL": api_url, "ANTHROPIC_API_KEY": "sk-ant-bench-0000"}
    return [sys.executable, "-m", "openbot", "run", "bench"], env


def claude_argv(work: Path, api_url: str, sandbox: str) -> tuple[list[str], dict[str, str]]:
    config = work / "claude-config"
    config.mkdir(exist_ok=True)
    env = {**QUIET, "ANTHROPIC_BASE_URL": api_url, "ANTHROPIC_API_KEY": "sk-ant-bench-0000"}
    env |= {"CLAUDE_CONFIG_DIR": str(config), "IS_SANDBOX": "1", "ANTHROPIC_MODEL": MODEL}
    argv = ["claude", "-p", TASK, "--output-format", "stream-json", "--verbose"]
    return [*argv, "--dangerously-skip-permissions"], env


def codex_argv(work: Path, api_url: str, sandbox: str) -> tuple[list[str], dict[str, str]]:
    codex_home = work / "codex-home"
    codex_home.mkdir(exist_ok=True)
    env = {"CODEX_HOME": str(codex_home), "OPENAI_API_KEY": "sk-bench-0000"}
    provider = [
        'model_provider="bench"',
        'model_providers.bench.name="bench"',
        f'model_providers.bench.base_url="{api_url}/v1"',
        'model_providers.bench.wire_api="responses"',
        'model_providers.bench.env_key="OPENAI_API_KEY"',
        "model_providers.bench.request_max_retries=0",
        "model_providers.bench.stream_max_retries=0",
    ]
    flags = [x for p in provider for x in ("-c", p)]
    argv = ["codex", "exec", "--json", "--skip-git-repo-check", "-s", "workspace-write", "-m", "gpt-5.5"]
    return [*argv, *flags, TASK], env


PEERS: dict[str, tuple[str, Callable[[Path, str, str], tuple[list[str], dict[str, str]]]]] = {
    "openbot": ("anthropic", openbot_argv),
    "claude": ("anthropic", claude_argv),
    "codex": ("responses", codex_argv),
}


def run_once(
    peer: str, urls: dict[str, str], logs: dict[str, Log], sandbox: str, state: Path
) -> dict[str, Any]:
    """One run in a fresh repository; `state` (HOME, the peer's config dir) is kept from run to run, as a
    user's is, so the warm-up run leaves what a first run makes (openbot: the Models API answer)."""
    wire, build = PEERS[peer]
    with tempfile.TemporaryDirectory(prefix=f"bench-{peer}-", dir=os.environ.get("BENCH_DIR")) as tmp:
        work = Path(tmp)
        repo = make_repo(work / "repo")
        (state / peer).mkdir(parents=True, exist_ok=True)
        argv, env = build(state / peer, urls[wire], sandbox)
        logs[wire].reset()
        load = os.getloadavg()[0]
        stats, out = work / "stats.json", work / "out.log"
        full_env = {**os.environ, **env, "HOME": str(state / peer)}
        subprocess.run(
            [sys.executable, "-c", WRAPPER, str(stats), str(out), *argv], cwd=repo, env=full_env, timeout=600
        )
        s = json.loads(stats.read_text())
        calls = logs[wire].reset()
        scenario = [c for c in calls if c[1]]
        if len(scenario) < CALLS:
            tail = out.read_text(errors="replace")[-2000:]
            raise SystemExit(f"{peer}: {len(scenario)} of {CALLS} model calls (rc {s['rc']}):\n{tail}")
        prompt = sum(c[2] for c in calls)
        return {
            "peer": peer,
            "rc": s["rc"],
            "first_request_s": scenario[0][0] - s["t0"],
            "loop_s": scenario[-1][0] - scenario[0][0],
            "whole_s": s["t1"] - s["t0"],
            "tokens_sent": prompt,
            "tokens_call1": scenario[0][2],
            "cache_read_share": sum(c[3] for c in calls) / prompt if prompt else 0.0,
            "peak_mb": s["maxrss_kb"] / 1024,
            "requests": len(calls),
            "load": load,
        }


FIELDS = [
    ("first_request_s", "launch → first request (s)"),
    ("loop_s", "16-call loop (s)"),
    ("whole_s", "whole run (s)"),
    ("tokens_sent", "tokens sent"),
    ("tokens_call1", "tokens on call 1"),
    ("cache_read_share", "cache-read share"),
    ("peak_mb", "peak memory (MB)"),
]


def table(results: list[dict[str, Any]], peers: list[str]) -> str:
    by = {p: [r for r in results if r["peer"] == p] for p in peers}
    rounds = min(len(v) for v in by.values())
    head = "| measure | " + " | ".join(f"{p} (median)" for p in peers)
    head += "".join(f" | openbot ÷ {p}" for p in peers if p != "openbot") + " |"
    lines = [head, "|---|" + "---:|" * (len(peers) + len(peers) - 1)]
    for key, label in FIELDS:
        cells = [f"{statistics.median(r[key] for r in by[p]):,.3f}" for p in peers]
        for p in peers:
            if p == "openbot":
                continue
            ratios = [by["openbot"][i][key] / by[p][i][key] for i in range(rounds) if by[p][i][key]]
            cells.append(f"{statistics.median(ratios):.2f}×" if ratios else "–")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    loads = [r["load"] for r in results]
    lines.append("")
    lines.append(
        f"{rounds} interleaved rounds; ratios are per-round pairs, then the median; "
        f"1-min load average during the runs: median {statistics.median(loads):.2f} "
        f"(min {min(loads):.2f}, max {max(loads):.2f}) on {os.cpu_count()} cores."
    )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--peers", default="openbot,claude,codex")
    parser.add_argument("--sandbox", default="workspace-write", help="openbot's sandbox mode")
    parser.add_argument("--json", help="also write every run's figures to this file")
    args = parser.parse_args()
    peers = args.peers.split(",")
    missing = [p for p in peers if p != "openbot" and shutil.which(p) is None]
    if missing:
        raise SystemExit(
            f"not installed: {', '.join(missing)} (npm install -g @anthropic-ai/claude-code @openai/codex)"
        )
    # A pip-installed openbot has its bytecode compiled; with PYTHONDONTWRITEBYTECODE set (as on some CI
    # machines) every run would compile its ~400 modules again, which no installed copy does.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    logs = {"anthropic": Log(), "responses": Log()}
    api, responses = start_anthropic(logs["anthropic"]), start_responses(logs["responses"])
    host, port = responses.server_address[:2]
    urls = {"anthropic": api.base_url, "responses": f"http://{host!s}:{port}"}
    state = Path(tempfile.mkdtemp(prefix="bench-state-", dir=os.environ.get("BENCH_DIR")))
    for peer in peers:  # warm-up, not counted: disk caches, compiled bytecode, first-run files
        run_once(peer, urls, logs, args.sandbox, state)
    results = []
    for n in range(args.rounds):
        order = peers[n % len(peers) :] + peers[: n % len(peers)]
        for peer in order:
            r = run_once(peer, urls, logs, args.sandbox, state)
            results.append(r)
            print(
                f"round {n + 1} {peer}: "
                + ", ".join(
                    f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}"
                    for k, v in r.items()
                    if k != "peer"
                ),
                file=sys.stderr,
            )
    shutil.rmtree(state, ignore_errors=True)
    print(table(results, peers))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
