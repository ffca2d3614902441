"""A long scripted run: 200 tool calls with ~20 kB outputs each.

1. Peak memory (max RSS) of the real `openbot run` process at 50, 100 and 200 calls (target < 150 MB, flat).
2. Tokens sent over the whole turn with context compaction (the default) vs without (window = infinity),
   counted as the scripted backend counts them (characters / 4 of system + messages per call).
3. Tokens and cost of the same 200-call turn on the Anthropic backend: the real SDK against the loopback
   server (`openbot.testing.fakeapi`, its prompt-cache simulation, a 200k window), with and without
   thinking blocks: prompt tokens, the share read from the cache, compactions, the largest request, cost
   at the claude-sonnet-5-5 price, and whether the turn completed.
Usage: python scripts/bench_long_run.py [--anthropic-only]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CMD = (
    'for i in $(seq 190); do echo "line $i of call {n}: lorem ipsum dolor sit amet consectetur adipiscing '
    'elit sed do eiusmod tempor"; done'
)


def script(calls: int) -> dict:
    responses = [
        {"tool_calls": [{"name": "shell", "input": {"command": CMD.format(n=n)}}]} for n in range(calls)
    ]
    responses.append(
        {"tool_calls": [{"name": "session_complete", "input": {"summary": "done", "action": "review"}}]}
    )
    return {"responses": responses}


def git(repo: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@b",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@b",
    }
    subprocess.run(["git", *args], cwd=repo, check=True, env=env, capture_output=True)


def peak_rss_mb(calls: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        home, repo = Path(tmp) / "home", Path(tmp) / "repo"
        repo.mkdir()
        git(repo, "init", "-q", "-b", "main")
        (repo / "README.md").write_text("bench\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "init")
        bot = home / "bots" / "long"
        bot.mkdir(parents=True)
        (bot / "script.json").write_text(json.dumps(script(calls)))
        (bot / "config.md").write_text(
            '+++\nmodel = "scripted:script.json"\nmax_turn_steps = 1000\nmax_repeats = 1000\n+++\nBench.\n'
        )
        proc = subprocess.Popen(
            [sys.executable, "-m", "openbot", "run", "long"],
            cwd=repo,
            env={**os.environ, "OPENBOT_HOME": str(home)},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        _, status, usage = os.wait4(proc.pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0, "the run failed"
        return usage.ru_maxrss / 1024  # KiB on Linux


def tokens_sent(calls: int, window: int) -> tuple[int, int]:
    from openbot.agent.budget import Budget
    from openbot.agent.context import ContextKeeper
    from openbot.agent.models.scripted import ScriptedModel
    from openbot.agent.tools.base import ToolContext
    from openbot.agent.tools.registry import default_tools
    from openbot.agent.turn import Turn, TurnLimits
    from openbot.state.conversation import Conversation

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "work"
        work.mkdir()
        model = ScriptedModel(script(calls)["responses"])
        conv = Conversation()
        conv.add_user_text("Bench.")
        ctx = ToolContext(workdir=work, session_dir=Path(tmp) / "s", env={"PATH": os.environ["PATH"]})
        turn = Turn(
            model=model,
            system="You are a bot.",
            tools=default_tools(),
            conversation=conv,
            ctx=ctx,
            limits=TurnLimits(1000, 1000),
            budget=Budget(),
            context=ContextKeeper(window=window),
        )
        turn.run()
        sizes = [(len(r.system) + len(json.dumps(r.messages))) // 4 for r in model.requests]
        return sum(sizes), max(sizes)


SYSTEM = "You are a careful coding bot. " * 800  # ~6k tokens, like a real system prompt with skills


def anthropic_run(calls: int, window: int, thinking: bool, server: bool = False) -> dict[str, object]:
    """One turn of `calls` shell calls on the Anthropic backend against the loopback server; `server`:
    the API compacts the conversation itself (server-side compaction at 75 % of the window)."""
    from openbot.agent.budget import Budget
    from openbot.agent.context import ContextKeeper
    from openbot.agent.models.anthropic.backend import AnthropicModel
    from openbot.agent.models.base import ModelOptions
    from openbot.agent.tools.base import ToolContext
    from openbot.agent.tools.registry import default_tools
    from openbot.agent.turn import Turn, TurnLimits
    from openbot.events import ListSink
    from openbot.state.conversation import Conversation
    from openbot.testing import fakeapi

    def respond(body: dict) -> object:  # a summary request (only the append-only compaction makes one)
        if "outgrow the model's context window" in fakeapi.last_user_text(body):
            return fakeapi.reply(
                "Summary: ran the shell loop many times; keep going.", thinking="Sum up." * thinking
            )
        return None

    think = "I will run the next command." if thinking else ""
    items = [
        fakeapi.reply(
            "", [{"name": "shell", "input": {"command": CMD.format(n=n)}, "id": f"t{n}"}], thinking=think
        )
        for n in range(calls)
    ] + [fakeapi.reply("done", thinking=think)]
    with (
        tempfile.TemporaryDirectory() as tmp,
        fakeapi.FakeAnthropic(items, window=window, respond=respond) as api,
    ):
        os.environ.update(ANTHROPIC_BASE_URL=api.base_url, ANTHROPIC_API_KEY="sk-ant-bench-0000000000")
        work = Path(tmp) / "work"
        work.mkdir()
        sink = ListSink()
        ctx = ToolContext(
            workdir=work, session_dir=Path(tmp) / "s", env={"PATH": os.environ["PATH"]}, sink=sink
        )
        conv = Conversation()
        conv.add_user_text("Bench.")
        turn = Turn(
            model=AnthropicModel(
                "claude-sonnet-5-5", options=ModelOptions(compaction_trigger=int(window * 0.75) * server)
            ),
            system=SYSTEM,
            tools=default_tools(),
            conversation=conv,
            ctx=ctx,
            limits=TurnLimits(1000, 1000),
            budget=Budget(),
            context=ContextKeeper(window=window, server_compaction=server),
        )
        outcome = "completed"
        try:
            turn.run()
        except Exception as e:  # noqa: BLE001 (the "before" code fails here with thinking on)
            outcome = f"failed after {len(api.bodies)} calls: {str(e)[:90]}"
    counts = [e for e in sink.events if type(e).__name__ == "TokenCount"]
    prompts = [e.input + e.cache_read + e.cache_write for e in counts]
    return {
        "outcome": outcome,
        "calls": len(counts),
        "prompt": sum(prompts),
        "read_share": sum(e.cache_read for e in counts) / max(1, sum(prompts)),
        "largest": max(prompts, default=0),
        "compactions": sum(1 for e in sink.events if getattr(e, "kind", "") == "context_compacted"),
        "output": sum(e.output for e in counts),
        "cost": sum(e.cost_usd for e in counts),
    }


def anthropic_table() -> None:
    print(
        "\n| 200 calls, Anthropic backend, window 200k | model calls | prompt tokens | cache-read share "
        "| compactions | largest request | output tokens | cost (USD) | outcome |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for thinking, server in ((False, False), (True, False), (False, True), (True, True)):
        r = anthropic_run(200, 200_000, thinking, server)
        mode = ("on" if thinking else "off") + (", the API compacts" if server else ", openbot compacts")
        print(
            f"| thinking {mode} | {r['calls']} | {r['prompt']:,} | {r['read_share']:.1%} "
            f"| {r['compactions']} "
            f"| {r['largest']:,} | {r['output']:,} | {r['cost']:.2f} | {r['outcome']} |"
        )


def main() -> None:
    if "--anthropic-only" in sys.argv:
        anthropic_table()
        return
    print("| tool calls | peak RSS of `openbot run` (MB) |")
    print("|---:|---:|")
    for calls in (50, 100, 200):
        print(f"| {calls} | {peak_rss_mb(calls):.1f} |")
    with_total, with_max = tokens_sent(200, 200_000)
    without_total, without_max = tokens_sent(200, 10**12)
    print("\n| 200 calls | tokens sent in all | largest single request (tokens) |")
    print("|---|---:|---:|")
    print(f"| with compaction (window 200k) | {with_total:,} | {with_max:,} |")
    print(f"| without compaction | {without_total:,} | {without_max:,} |")
    print(
        f"\ncompaction sends {with_total / without_total:.2f}x the tokens; without it the largest request "
        f"is {without_max / 200_000:.1f}x the window (a context-length error on a real model)"
    )
    anthropic_table()


if __name__ == "__main__":
    main()
