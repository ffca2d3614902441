"""A long scripted run: 200 tool calls with ~20 kB outputs each.

1. Peak memory (max RSS) of the real `openbot run` process at 50, 100 and 200 calls (target < 150 MB, flat).
2. Tokens sent over the whole turn with context compaction (the default) vs without (window = infinity),
   counted as the scripted backend counts them (characters / 4 of system + messages per call).
Usage: python scripts/bench_long_run.py
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


def main() -> None:
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


if __name__ == "__main__":
    main()
