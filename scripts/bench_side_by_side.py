"""openbot, Claude Code and Codex side by side: one 16-call scenario against loopback model servers.

Each peer works in a fresh git repository on the same task script: 15 model replies each run one shell
command (the same 15 commands for all), the 16th ends the work. The Anthropic stand-in is
`openbot.testing.fakeapi` (its prompt-cache simulation gives the token figures); Codex gets a minimal
OpenAI Responses stand-in defined here. Both answer with TCP_NODELAY, as a real API edge does. Rounds are
interleaved (the order rotates each round) and ratios are taken per round, then the median, because this
2-core machine is shared. The load average is reported with the figures.

Every run is verified before a figure of it is used: each command ends with `&& printf` of a marker made
from a nonce drawn for that run and the command's number (the marker's text is not in the command, so
only a command that ran and succeeded prints it); the server records every tool result the client sends
back, and the run counts only if the tool exited 0, all 16 model calls came, each of the 15 results
carries its own marker and no failed exit status, the file the scenario writes says the nonce, and (for
the tools that work in the repository itself) the repository holds the file effects afterwards. A run
that fails is reported with its reasons and its figures are dropped; a round with a failed run is
dropped from the ratios; when fewer rounds than asked are verified the script says so and exits 1
without a table.

Measured per run: launch → first model request (the first request that offers tools), the loop (first
to last model request: 15 tool round trips), the whole run (launch → exit), the end of the run (the last
model request, answered at once, → exit: what the tool does after the model's last word), tokens sent
(all requests; call 1), the share of input read from the prompt cache, peak memory (largest RSS of the
process tree, from `wait4` in a wrapper process), and the CPU (user + sys) of the whole process tree: the
wrapper is a child subreaper that reaps everything the tool orphaned (bwrap's namespace inits, detached
helpers) before it reads RUSAGE_CHILDREN.

Peers: `npm install -g @anthropic-ai/claude-code @openai/codex`; and `floor`, a reference built in here:
the least any tool can do with the scenario (the 16 requests as plain JSON, the 15 commands each a
`bash -c` from a small Python process, nothing confined, nothing recorded), so what a neighbour adds to
its loop is what the requests and the commands cost under load by themselves. `--json` also keeps each
run's 15 round trips (request to request), to see where load lands. Claude Code honours ANTHROPIC_BASE_URL;
Codex is pointed at the stand-in with a `model_providers` entry given by `-c` flags. Codex's own sandbox
refuses to work when CODEX_HOME lies under the temporary directory (every command then fails with
"bwrap: execvp codex-linux-sandbox"), so its CODEX_HOME is ~/.cache/openbot-bench/codex-home-<pid>,
removed at the end.

Passes (`--passes`, default both): `idle` as the machine is, and `neighbour` with one CPU-bound process
(this interpreter running `while True: pass`, in a session of its own since 2026-11-28 14:30 UTC) that the
script starts before the pass and stops after it — the load a shared machine adds. Each pass has its own
warm-up and table; after them, each tool's slowdown under the neighbour (the medians' ratio, neighbour ÷
idle) for the loop, the end of the run and the whole run.

Self-checks (each must end in a refusal, exit 1): `--break PEER` makes every command asked of PEER fail
(`false && …`); `--old-codex-home` puts CODEX_HOME under the temporary directory as this script once did.

Usage: python scripts/bench_side_by_side.py [--rounds 5] [--peers openbot,claude,codex[,floor]]
    [--passes idle,neighbour] [--json out.json]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from openbot.testing.fakeapi import FakeAnthropic, Reply, reply  # noqa: E402

CALLS = 16
WORK = [
    "ls -la",
    "cat README.md",
    "git status --short",
    "git log --oneline -3",
    "grep -rn 'def ' src | head -20",
    "wc -l src/*.py",
    "python3 -c 'print(1 + 1)'",
    "head -5 src/app.py",
    "echo checking {nonce} > notes.txt",
    "cat notes.txt",
    "find . -name '*.py' -not -path './.git/*' | sort",
    "git diff --stat",
    "tail -3 src/app.py",
    "date +%Y",
    "mv notes.txt checked.txt && git status --short",
]
assert len(WORK) == CALLS - 1
# What a command's output must show besides its marker: the file written by command 9 is read back by
# command 10, and command 15's `git status` sees it moved.
EXPECT = {9: "checking {nonce}", 14: "?? checked.txt"}
TASK = "Look around this repository with the shell, one command at a time, then say done."
MODEL = "claude-sonnet-5-5"
# The wrapper is a child subreaper: whatever the tool orphans (bwrap's namespace inits, a detached rm,
# a peer's helpers) is reparented to it and reaped below, so RUSAGE_CHILDREN holds the CPU of the whole
# tree (issue 36: `wait4` on the tool alone missed about half of openbot's). t1 is the tool's exit.
WRAPPER = (
    "import ctypes,json,os,resource,subprocess,sys,time\n"
    "ctypes.CDLL(None).prctl(36,1,0,0,0)\n"
    "t0=time.monotonic()\n"
    "out=open(sys.argv[2],'wb')\n"
    "rc=subprocess.call(sys.argv[3:],stdout=out,stderr=subprocess.STDOUT,stdin=subprocess.DEVNULL)\n"
    "t1=time.monotonic()\n"
    "while True:\n"
    "    try: os.wait()\n"
    "    except ChildProcessError: break\n"
    "u=resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "d={'t0':t0,'t1':t1,'rc':rc,'maxrss_kb':u.ru_maxrss,'cpu_s':u.ru_utime+u.ru_stime}\n"
    "open(sys.argv[1],'w').write(json.dumps(d))\n"
)
# The floor: the least any tool can do with the scenario, for reference — the 16 requests (plain JSON,
# one connection at a time, the conversation and nothing else) and the 15 commands, each `bash -c` from
# this small process, unconfined; no prompt, no records, no sandbox. What a neighbour adds to its loop
# is what the requests and the commands themselves cost under load, which every tool pays.
FLOOR = (
    "import http.client,json,os,subprocess,sys,urllib.parse\n"
    "u=urllib.parse.urlparse(os.environ['ANTHROPIC_BASE_URL'])\n"
    "schema={'type':'object','properties':{'command':{'type':'string'}},'required':['command']}\n"
    "tools=[{'name':'shell','description':'Run a shell command.','input_schema':schema}]\n"
    "head={'content-type':'application/json','x-api-key':os.environ['ANTHROPIC_API_KEY'],"
    "'anthropic-version':'2023-06-01'}\n"
    "messages=[{'role':'user','content':sys.argv[1]}]\n"
    "while True:\n"
    "    c=http.client.HTTPConnection(u.hostname,u.port)\n"
    "    body={'model':os.environ['ANTHROPIC_MODEL'],'max_tokens':1024,'messages':messages,'tools':tools}\n"
    "    c.request('POST','/v1/messages',json.dumps(body),head)\n"
    "    content=json.loads(c.getresponse().read())['content']\n"
    "    c.close()\n"
    "    messages.append({'role':'assistant','content':content})\n"
    "    uses=[b for b in content if b.get('type')=='tool_use' and b.get('name')=='shell']\n"
    "    if not uses: break\n"
    "    results=[]\n"
    "    for b in uses:\n"
    "        p=subprocess.run(['bash','-c',b['input']['command']],capture_output=True,text=True)\n"
    "        text=f'exit code: {p.returncode}\\n{p.stdout}{p.stderr}'\n"
    "        results.append({'type':'tool_result','tool_use_id':b['id'],'content':text})\n"
    "    messages.append({'role':'user','content':results})\n"
)
# How a tool reports a command's exit status inside the result the model gets: openbot heads it
# "exit code: N", Codex says "Process exited with code N"; Claude Code flags a failure with `is_error`.
STATUS = re.compile(r"(?:exit code:?|exited with code)\s*(-?\d+)", re.IGNORECASE)


# ── one run's script and what the servers saw of it ────────────────────────────────────────────────


@dataclass
class Scenario:
    """The commands asked for in one run (a fresh nonce each run) and every tool result sent back."""

    nonce: str
    broken: bool = False
    commands: list[str] = field(default_factory=list)
    results: dict[int, tuple[str, bool]] = field(default_factory=dict)  # command → (text, is_error)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        for i, work in enumerate(WORK):
            # printf builds the marker, so its text appears only in the output of a command that ran
            command = f"{work.format(nonce=self.nonce)} && printf 'done-%s-%02d\\n' {self.nonce} {i + 1}"
            self.commands.append(f"false && {command}" if self.broken else command)

    def marker(self, i: int) -> str:
        return f"done-{self.nonce}-{i + 1:02d}"

    def record(self, i: int, text: str, is_error: bool) -> None:
        with self.lock:
            self.results.setdefault(i, (text, is_error))  # the first sending is what the model got


class Current:
    """The scenario the servers answer with; the script runs one tool at a time."""

    scenario = Scenario(nonce="idle")


def text_of(content: Any) -> str:
    """A tool result's text: a string, or a list of text blocks (both protocols allow either)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            text_of(b.get("text") or b.get("content") if isinstance(b, dict) else b) for b in content
        )
    return ""


def command_number(call_id: Any, prefix: str) -> int | None:
    if isinstance(call_id, str) and call_id.startswith(prefix) and call_id[len(prefix) :].isdigit():
        return int(call_id[len(prefix) :])
    return None


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
    """Count the tool results in a Messages API conversation, recording each scenario result."""
    n = 0
    for m in messages:
        content = m.get("content") if isinstance(m, dict) else None
        for b in content if isinstance(content, list) else []:
            if isinstance(b, dict) and b.get("type") == "tool_result":
                n += 1
                i = command_number(b.get("tool_use_id"), "toolu_bench_")
                if i is not None:
                    Current.scenario.record(i, text_of(b.get("content")), bool(b.get("is_error")))
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
    commands = Current.scenario.commands
    if n < len(commands):
        command: dict[str, Any] = {"command": commands[n]}
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
        n = 0
        for i in body.get("input") or []:
            if i.get("type") == "function_call_output":
                n += 1
                k = command_number(i.get("call_id"), "call_")
                if k is not None:
                    Current.scenario.record(k, text_of(i.get("output")), False)
        commands = Current.scenario.commands
        if n < len(commands) and ("exec_command" in names or "shell" in names):
            name = "exec_command" if "exec_command" in names else "shell"
            args = (
                {"cmd": commands[n]} if name == "exec_command" else {"command": ["bash", "-lc", commands[n]]}
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


@dataclass
class Options:
    sandbox: str  # openbot's sandbox mode
    codex_home: Path
    broken: set[str] = field(default_factory=set)


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


def openbot_argv(work: Path, api_url: str, opts: Options) -> tuple[list[str], dict[str, str]]:
    home = work / "openbot-home"
    bot = home / "bots" / "bench"
    bot.mkdir(parents=True, exist_ok=True)
    config = f'model = "{MODEL}"\nmax_iterations = 1\nsleep_secs = 0\nsandbox = "{opts.sandbox}"'
    (bot / "config.md").write_text(f"+++\n{config}\n+++\n\n{TASK}\n")
    env = {"OPENBOT_HOME": str(home), "ANTHROPIC_BASE_URL": api_url, "ANTHROPIC_API_KEY": "sk-ant-bench-0000"}
    return [sys.executable, "-m", "openbot", "run", "bench"], env


def claude_argv(work: Path, api_url: str, opts: Options) -> tuple[list[str], dict[str, str]]:
    config = work / "claude-config"
    config.mkdir(exist_ok=True)
    env = {**QUIET, "ANTHROPIC_BASE_URL": api_url, "ANTHROPIC_API_KEY": "sk-ant-bench-0000"}
    env |= {"CLAUDE_CONFIG_DIR": str(config), "IS_SANDBOX": "1", "ANTHROPIC_MODEL": MODEL}
    argv = ["claude", "-p", TASK, "--output-format", "stream-json", "--verbose"]
    return [*argv, "--dangerously-skip-permissions"], env


def codex_argv(work: Path, api_url: str, opts: Options) -> tuple[list[str], dict[str, str]]:
    opts.codex_home.mkdir(parents=True, exist_ok=True)
    env = {"CODEX_HOME": str(opts.codex_home), "OPENAI_API_KEY": "sk-bench-0000"}
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


def floor_argv(work: Path, api_url: str, opts: Options) -> tuple[list[str], dict[str, str]]:
    env = {"ANTHROPIC_BASE_URL": api_url, "ANTHROPIC_API_KEY": "sk-ant-bench-0000", "ANTHROPIC_MODEL": MODEL}
    return [sys.executable, "-c", FLOOR, TASK], env


Build = Callable[[Path, str, Options], tuple[list[str], dict[str, str]]]
# (wire, argv builder, works in the repository itself: openbot works in a worktree of its own branch,
# which the scenario's "discard" removes, so its file effects are checked through its outputs alone)
PEERS: dict[str, tuple[str, Build, bool]] = {
    "openbot": ("anthropic", openbot_argv, False),
    "claude": ("anthropic", claude_argv, True),
    "codex": ("responses", codex_argv, True),
    "floor": ("anthropic", floor_argv, True),
}
BUILT_IN = {"openbot", "floor"}  # run with this interpreter: nothing to install


# ── verifying a run ────────────────────────────────────────────────────────────────────────────────


def excerpt(text: str, limit: int = 160) -> str:
    one = " ⏎ ".join(line.strip() for line in text.strip().splitlines() if line.strip())
    return repr(one[:limit] + ("…" if len(one) > limit else ""))


def command_problems(scenario: Scenario) -> list[str]:
    """What is wrong with each command's result as the model received it, one line a command."""
    problems = []
    for i, work in enumerate(WORK):
        name = f"command {i + 1} ({work.format(nonce='…')})"
        if i not in scenario.results:
            problems.append(f"{name}: its result never reached the model")
            continue
        text, is_error = scenario.results[i]
        status = STATUS.search(text)
        if is_error or (status and int(status.group(1)) != 0):
            problems.append(
                f"{name}: failed ({'is_error' if is_error else status.group(0)}): {excerpt(text)}"
            )
        elif scenario.marker(i) not in text:
            problems.append(f"{name}: no marker in its output: {excerpt(text)}")
        elif i in EXPECT and EXPECT[i].format(nonce=scenario.nonce) not in text:
            problems.append(
                f"{name}: output lacks {EXPECT[i].format(nonce=scenario.nonce)!r}: {excerpt(text)}"
            )
    return problems


def verify(rc: int, scenario_calls: int, scenario: Scenario, repo: Path | None) -> list[str]:
    """Every reason not to trust a run's figures; none when the tool did all the work.

    `repo` is the repository to check for the file effects, None for a tool that works elsewhere."""
    reasons = []
    if rc != 0:
        reasons.append(f"the tool exited {rc}")
    if scenario_calls != CALLS:
        reasons.append(f"{scenario_calls} of {CALLS} model calls")
    problems = command_problems(scenario)
    if len(problems) > 3:  # one line for a systematic failure, with the first case
        reasons.append(f"{len(problems)} of {len(WORK)} commands failed; the first: {problems[0]}")
    else:
        reasons.extend(problems)
    if repo is not None:
        checked, notes = repo / "checked.txt", repo / "notes.txt"
        want = f"checking {scenario.nonce}\n"
        if not checked.is_file() or checked.read_text(errors="replace") != want:
            reasons.append(f"the repository has no checked.txt saying {want.strip()!r}")
        if notes.exists():
            reasons.append("notes.txt is still in the repository")
    return reasons


# ── running ────────────────────────────────────────────────────────────────────────────────────────


def launch(argv: list[str], cwd: Path, env: dict[str, str], stats: Path, out: Path) -> dict[str, Any]:
    wrapped = [sys.executable, "-c", WRAPPER, str(stats), str(out), *argv]
    proc = subprocess.Popen(wrapped, cwd=cwd, env=env, start_new_session=True)
    try:
        proc.wait(timeout=600)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the tool and all it started
        proc.wait()
        now = time.monotonic()
        return {"t0": now, "t1": now, "rc": -9, "maxrss_kb": 0, "cpu_s": 0.0}
    return dict(json.loads(stats.read_text()))


def figures(calls: list[tuple[float, bool, int, int]], s: dict[str, Any]) -> dict[str, Any]:
    scenario = [c for c in calls if c[1]]
    prompt = sum(c[2] for c in calls)
    first, last = (scenario[0][0], scenario[-1][0]) if scenario else (s["t0"], s["t0"])
    return {
        "first_request_s": first - s["t0"],
        "loop_s": last - first,
        "round_trips_s": [b[0] - a[0] for a, b in itertools.pairwise(scenario)],  # one per command
        "whole_s": s["t1"] - s["t0"],
        "end_s": s["t1"] - last if scenario else 0.0,
        "tokens_sent": prompt,
        "tokens_call1": scenario[0][2] if scenario else 0,
        "cache_read_share": sum(c[3] for c in calls) / prompt if prompt else 0.0,
        "peak_mb": s["maxrss_kb"] / 1024,
        "cpu_s": s["cpu_s"],
        "requests": len(calls),
    }


def run_once(
    peer: str, urls: dict[str, str], logs: dict[str, Log], opts: Options, state: Path
) -> dict[str, Any]:
    """One verified-or-not run in a fresh repository; `state` (HOME, the peer's config dir) is kept from
    run to run, as a user's is, so the warm-up run leaves what a first run makes (openbot: the Models API
    answer)."""
    wire, build, in_place = PEERS[peer]
    with tempfile.TemporaryDirectory(prefix=f"bench-{peer}-", dir=os.environ.get("BENCH_DIR")) as tmp:
        work = Path(tmp)
        repo = make_repo(work / "repo")
        (state / peer).mkdir(parents=True, exist_ok=True)
        argv, env = build(state / peer, urls[wire], opts)
        Current.scenario = scenario = Scenario(nonce=secrets.token_hex(4), broken=peer in opts.broken)
        logs[wire].reset()
        load = os.getloadavg()[0]
        stats, out = work / "stats.json", work / "out.log"
        s = launch(argv, repo, {**os.environ, **env, "HOME": str(state / peer)}, stats, out)
        calls = logs[wire].reset()
        Current.scenario = Scenario(nonce="idle")
        reasons = verify(s["rc"], sum(1 for c in calls if c[1]), scenario, repo if in_place else None)
        tail = "" if not reasons else out.read_text(errors="replace")[-1500:]
    run = {"peer": peer, "rc": s["rc"], "verified": not reasons, "reasons": reasons, "nonce": scenario.nonce}
    return {**run, **figures(calls, s), "load": load, "output_tail": tail}


def report(label: str, r: dict[str, Any]) -> None:
    if r["verified"]:
        hidden = ("peer", "verified", "reasons", "output_tail", "round_trips_s")  # the round trips: --json
        shown = {k: v for k, v in r.items() if k not in hidden}
        values = ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in shown.items())
        print(f"{label} {r['peer']}: verified (15 markers, exit 0); {values}", file=sys.stderr)
        return
    print(f"{label} {r['peer']}: FAILED, figures not used:", file=sys.stderr)
    for reason in r["reasons"]:
        print(f"  - {reason}", file=sys.stderr)
    print("  its output ends:\n    " + "\n    ".join(r["output_tail"].splitlines()[-12:]), file=sys.stderr)


FIELDS = [  # (key, label, format of a median)
    ("first_request_s", "launch → first request", "{:.2f} s"),
    ("loop_s", "16-call loop", "{:.2f} s"),
    ("whole_s", "whole run", "{:.2f} s"),
    ("end_s", "end of run (last request → exit)", "{:.3f} s"),
    ("cpu_s", "CPU, whole process tree", "{:.2f} s"),
    ("tokens_sent", "tokens sent (16 calls)", "{:,.0f}"),
    ("tokens_call1", "tokens on call 1", "{:,.0f}"),
    ("cache_read_share", "cache-read share", "{:.3f}"),
    ("peak_mb", "peak memory", "{:.0f} MB"),
]
NAMES = {"openbot": "openbot", "claude": "Claude Code", "codex": "Codex", "floor": "floor"}


def table(rounds: list[dict[str, dict[str, Any]]], peers: list[str]) -> str:
    """Medians and per-round ratios over verified rounds only (each maps a peer to its run)."""
    assert rounds and all(r[p]["verified"] for r in rounds for p in peers), "a figure from a failed run"
    others = [p for p in peers if p != "openbot"] if "openbot" in peers else []
    head = "| measure | " + " | ".join(NAMES[p] for p in peers)
    head += "".join(f" | openbot ÷ {NAMES[p]}" for p in others) + " |"
    lines = [head, "|---|" + "---:|" * (len(peers) + len(others))]
    for key, label, form in FIELDS:
        cells = [form.format(statistics.median(r[p][key] for r in rounds)) for p in peers]
        for p in others:
            ratios = [r["openbot"][key] / r[p][key] for r in rounds if r[p][key]]
            cells.append(f"{statistics.median(ratios):.2f}×" if ratios else "–")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    loads = [r[p]["load"] for r in rounds for p in peers]
    lines.append("")
    lines.append(
        f"{len(rounds)} interleaved rounds, every run verified (15 command markers seen by the server, exit "
        f"codes 0, file effects); medians; ratios are per-round pairs, then the median; 1-min load average "
        f"during the runs: median {statistics.median(loads):.2f} (min {min(loads):.2f}, max "
        f"{max(loads):.2f}) on {os.cpu_count()} cores."
    )
    return "\n".join(lines)


def summarise(runs: list[dict[str, Any]], peers: list[str], asked: int) -> tuple[int, str]:
    """(0, the table) when every one of the `asked` rounds is verified, else (1, why no figures)."""
    rounds = [{r["peer"]: r for r in runs if r["round"] == n + 1} for n in range(asked)]
    verified = [r for r in rounds if all(p in r and r[p]["verified"] for p in peers)]
    if len(verified) < asked:
        failed = ", ".join(sorted({r["peer"] for r in runs if not r["verified"]})) or "none"
        return 1, (
            f"bench: {len(verified)} of {asked} rounds verified (failed runs by {failed}; "
            "their reasons are above): no figures reported"
        )
    return 0, table(verified, peers)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--peers", default="openbot,claude,codex")
    parser.add_argument("--sandbox", default="workspace-write", help="openbot's sandbox mode")
    parser.add_argument("--json", help="also write every run's figures and verdict to this file")
    parser.add_argument(
        "--passes", default="idle,neighbour", help="idle, neighbour (a CPU-bound process it starts), or both"
    )
    parser.add_argument("--break", dest="broken", default="", help="self-check: these peers' commands fail")
    parser.add_argument(
        "--old-codex-home", action="store_true", help="self-check: CODEX_HOME under the temporary directory"
    )
    return parser.parse_args(argv)


def bench(args: argparse.Namespace, peers: list[str], state: Path, opts: Options) -> list[dict[str, Any]]:
    logs = {"anthropic": Log(), "responses": Log()}
    api, responses = start_anthropic(logs["anthropic"]), start_responses(logs["responses"])
    host, port = responses.server_address[:2]
    urls = {"anthropic": api.base_url, "responses": f"http://{host!s}:{port}"}
    runs = []
    try:
        for peer in peers:  # warm-up, not counted: disk caches, compiled bytecode, first-run files
            report("warm-up", run_once(peer, urls, logs, opts, state))
        for n in range(args.rounds):
            order = peers[n % len(peers) :] + peers[: n % len(peers)]
            for peer in order:
                r = run_once(peer, urls, logs, opts, state)
                report(f"round {n + 1}", r)
                runs.append({**r, "round": n + 1})
    finally:
        responses.shutdown()
        api.__exit__(None, None, None)
    return runs


NEIGHBOUR = "while True: pass"  # one CPU-bound process: what a shared machine adds


def bench_pass(
    name: str, args: argparse.Namespace, peers: list[str], state: Path, opts: Options
) -> list[dict[str, Any]]:
    """One pass's runs (each marked with the pass), with the neighbour running throughout when asked."""
    neighbour = None
    if name == "neighbour":
        # In a session of its own, as another job on a shared machine is: in this script's session it
        # shared an autogroup (one scheduling entity) with the model stand-in's request handlers
        neighbour = subprocess.Popen(
            [sys.executable, "-c", NEIGHBOUR], stdin=subprocess.DEVNULL, start_new_session=True
        )
        time.sleep(1)  # the load average starts to show it; the runs compete with it from the first
    print(f"── pass: {name}" + (f" (neighbour pid {neighbour.pid})" if neighbour else ""), file=sys.stderr)
    try:
        return [{**r, "pass": name} for r in bench(args, peers, state, opts)]
    finally:
        if neighbour is not None:
            neighbour.kill()
            neighbour.wait()


SLOWED = [("loop_s", "16-call loop"), ("end_s", "end of run"), ("whole_s", "whole run")]


def slowdown(by_pass: dict[str, list[dict[str, Any]]], peers: list[str]) -> str:
    """Each tool's median under the neighbour ÷ its median idle: how much the load slows it."""
    lines = ["| slowdown, neighbour ÷ idle | " + " | ".join(NAMES[p] for p in peers) + " |"]
    lines.append("|---|" + "---:|" * len(peers))
    for key, label in SLOWED:
        cells = []
        for p in peers:
            idle = statistics.median(r[key] for r in by_pass["idle"] if r["peer"] == p)
            loaded = statistics.median(r[key] for r in by_pass["neighbour"] if r["peer"] == p)
            cells.append(f"{loaded / idle:.2f}×" if idle else "–")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    peers, passes = args.peers.split(","), args.passes.split(",")
    unknown = [p for p in peers + [b for b in args.broken.split(",") if b] if p not in PEERS]
    unknown += [p for p in passes if p not in ("idle", "neighbour")]
    if unknown or args.rounds < 1:
        print(
            f"bench: unknown peer or pass {unknown} (peers: {', '.join(PEERS)}; passes: idle, neighbour) "
            "or --rounds < 1",
            file=sys.stderr,
        )
        return 2
    missing = [p for p in peers if p not in BUILT_IN and shutil.which(p) is None]
    if missing:
        print(
            f"not installed: {', '.join(missing)} (npm install -g @anthropic-ai/claude-code @openai/codex)",
            file=sys.stderr,
        )
        return 2
    # A pip-installed openbot has its bytecode compiled; with PYTHONDONTWRITEBYTECODE set (as on some CI
    # machines) every run would compile its ~400 modules again, which no installed copy does.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    state = Path(tempfile.mkdtemp(prefix="bench-state-", dir=os.environ.get("BENCH_DIR")))
    # Codex's sandbox helper refuses a CODEX_HOME under the temporary directory: the user's cache it is.
    codex_home = Path.home() / ".cache" / "openbot-bench" / f"codex-home-{os.getpid()}"
    if args.old_codex_home:
        codex_home = state / "codex" / "codex-home"
    opts = Options(args.sandbox, codex_home, {b for b in args.broken.split(",") if b})
    by_pass: dict[str, list[dict[str, Any]]] = {}
    try:
        for name in passes:
            by_pass[name] = bench_pass(name, args, peers, state, opts)
    finally:
        shutil.rmtree(state, ignore_errors=True)
        shutil.rmtree(codex_home, ignore_errors=True)
    if args.json:
        Path(args.json).write_text(json.dumps([r for runs in by_pass.values() for r in runs], indent=1))
    code, texts = 0, []
    for name, runs in by_pass.items():
        pass_code, text = summarise(runs, peers, args.rounds)
        code = max(code, pass_code)
        texts.append(f"### {name}\n\n{text}")
    if code == 0 and {"idle", "neighbour"} <= set(by_pass):
        texts.append(slowdown(by_pass, peers))
    print("\n\n".join(texts), file=sys.stdout if code == 0 else sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
