"""The real-model benchmark: openbot (through `openbot eval`) and mini-swe-agent on the same small tasks,
the same local model and server, the same checks. Not a test: it needs the model server and takes an hour.

    ../shared/realmodel/serve.sh start      # Qwen2.5-Coder-1.5B on 127.0.0.1:8089 (docs/BENCHMARKS.md)
    python3 -m venv /work/mswea && /work/mswea/bin/pip install mini-swe-agent
    python scripts/bench_realmodel.py --harness openbot,mini [--tasks a,b] [--minutes 3] [--json out.json]

Harnesses: `openbot` (the bot config below, no tool_protocol key), `openbot-native`, `openbot-text`,
`openbot-auto` (tool_protocol = native/text/auto: skipped, and said, where this openbot has no such key),
`mini` (mini-swe-agent's mini_textbased.yaml, litellm_textbased, as its docs say for local models).
Every task's repository is made fresh for every harness from the recipe in bench_tasks.py; a task counts as
solved only when its check passes in a clean clone of what the harness left (committed or not). Before any
harness runs, each check is proved to fail on the untouched repository and to pass after a reference fix.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_tasks import TASKS, BenchTask  # noqa: E402

from openbot.git.gitcmd import run_git  # noqa: E402
from openbot.run.eval import prepare  # noqa: E402
from openbot.run.eval.suite import Limits, Task  # noqa: E402

MODEL = "qwen2.5-coder-1.5b"
PROTOCOLS = {"openbot": None, "openbot-native": "native", "openbot-text": "text", "openbot-auto": "auto"}
MINI = os.environ.get("MINI_SWE_AGENT", "/work/mswea/bin/mini")
INSTRUCTIONS = "You change files in a tiny repository. Do the task, then call session_complete."


def _task(t: BenchTask, minutes: float) -> Task:
    limits = Limits(max_iterations=2, max_minutes=minutes, check_timeout_secs=60)
    return Task(name=t["name"], prompt=t["prompt"], check=t["check"], limits=limits, files=t["files"])


def selftest(tasks: list[BenchTask], tmp: Path) -> None:
    """Each check fails on the untouched repository and passes after the reference fix: else stop here."""
    for t in tasks:
        repo = tmp / "selftest" / t["name"]
        prepare.make_repo(_task(t, 1), repo)
        before, _ = prepare.run_check(t["check"], repo, 60)
        subprocess.run(["bash", "-c", t["solve"]], cwd=repo, check=True)
        after, out = prepare.run_check(t["check"], repo, 60)
        if before == 0 or after != 0:
            sys.exit(f"selftest: {t['name']}: check exits {before} untouched, {after} fixed: {out[-300:]}")
    print(f"selftest: {len(tasks)} checks fail untouched and pass after the reference fix", file=sys.stderr)


def bot_config(base_url: str, protocol: str | None) -> str:
    keys = [
        f'model = "llamacpp:{MODEL}"',
        f'base_url = "{base_url}"',
        "context_window = 8192",
        "sleep_secs = 0",
        "max_turn_steps = 6",  # a small model that loops is stopped early
        "max_output_tokens = 1024",  # openbot's minimum; generation runs at 2-10 tok/s here
        "stall_timeout_secs = 300",  # a CPU server reads a 2k prompt ~85 s in silence
        "api_patience_minutes = 2",
    ]
    if protocol is not None:
        keys.append(f'tool_protocol = "{protocol}"')
    return "+++\n" + "\n".join(keys) + "\n+++\n\n" + INSTRUCTIONS + "\n"


def run_openbot(name: str, tasks: list[BenchTask], args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    home = tmp / f"home-{name}"
    (home / "bots" / "bench").mkdir(parents=True)
    (home / "bots" / "bench" / "config.md").write_text(bot_config(args.base_url, PROTOCOLS[name]))
    env = {**os.environ, "OPENBOT_HOME": str(home)}
    shown = subprocess.run(
        [sys.executable, "-m", "openbot", "bots", "show", "bench"], env=env, capture_output=True, text=True
    )
    if shown.returncode != 0:  # this openbot does not know tool_protocol (or the config is wrong): say so
        return {"harness": name, "skipped": (shown.stderr.strip().splitlines() or ["?"])[-1]}
    suite = tmp / f"suite-{name}.toml"
    suite.write_text(suite_toml(tasks, args.minutes))
    out = tmp / f"{name}.json"
    cmd = [sys.executable, "-m", "openbot", "eval", str(suite), "--bot", "bench", "--json", str(out)]
    print(f"bench: {name}: {' '.join(cmd[1:])}", file=sys.stderr, flush=True)
    subprocess.run(cmd, env=env, cwd=tmp, stdout=subprocess.DEVNULL)
    data = json.loads(out.read_text())
    rows = [
        {
            k: r[k]
            for k in ("name", "solved", "claimed_done", "model_calls", "tool_calls", "tokens", "wall_secs")
        }
        | {"status": r["status"], "exit": r["exit_code"], "check_exit": r["check_exit"]}
        for r in data["results"]
    ]
    return {"harness": name, "rows": rows}


def suite_toml(tasks: list[BenchTask], minutes: float) -> str:
    lines = [f"[defaults]\nmax_iterations = 2\nmax_minutes = {minutes}\ncheck_timeout_secs = 60\n"]
    for t in tasks:
        files = ", ".join(f"{json.dumps(k)} = {json.dumps(v)}" for k, v in t["files"].items())
        lines.append(
            f"[[task]]\nname = {json.dumps(t['name'])}\nprompt = {json.dumps(t['prompt'])}\n"
            f"check = {json.dumps(t['check'])}\nfiles = {{ {files} }}\n"
        )
    return "\n".join(lines)


def run_mini(tasks: list[BenchTask], args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    rows = []
    for i, t in enumerate(tasks, 1):
        print(f"bench: mini [{i}/{len(tasks)}] {t['name']} …", file=sys.stderr, flush=True)
        rows.append(mini_task(t, args, tmp / "mini" / t["name"]))
        r = rows[-1]
        print(
            f"bench: mini {t['name']}: solved={r['solved']} ({r['status']}, {r['wall_secs']} s)",
            file=sys.stderr,
        )
    return {"harness": "mini", "rows": rows}


def mini_task(t: BenchTask, args: argparse.Namespace, work: Path) -> dict[str, Any]:
    task = _task(t, args.minutes)
    repo = work / "repo"
    work.mkdir(parents=True)
    base = prepare.make_repo(task, repo)
    wall = int(args.minutes * 60)
    cmd = [MINI, "-y", "--exit-immediately", "--model-class", "litellm_textbased", "-m", f"openai/{MODEL}"]
    cmd += ["-c", "mini_textbased.yaml", "-c", f"model.model_kwargs.api_base={args.base_url}"]
    cmd += ["-c", "model.cost_tracking=ignore_errors", "-c", f"agent.step_limit={args.mini_steps}"]
    cmd += ["-c", "model.model_kwargs.max_tokens=1024"]  # as openbot's max_output_tokens
    cmd += ["-c", f"agent.wall_time_limit_seconds={wall}", "-c", f"environment.cwd={repo}"]
    cmd += ["-t", t["prompt"], "-o", str(work / "traj.json")]
    env = {
        **os.environ,
        "MSWEA_CONFIGURED": "true",
        "OPENAI_API_KEY": "none",
        "MSWEA_COST_TRACKING": "ignore_errors",
    }
    started = time.monotonic()
    try:
        with (work / "mini.log").open("w") as log:
            subprocess.run(
                cmd, cwd=repo, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log, timeout=wall + 120
            )
    except subprocess.TimeoutExpired:
        pass
    secs = round(time.monotonic() - started, 1)
    # What mini-swe-agent left in the directory, committed so a clean clone can be checked.
    run_git(repo, "add", "-A")
    run_git(repo, *prepare.IDENTITY, "commit", "-q", "--allow-empty", "-m", "mini-swe-agent's work")
    prepare.check_out(repo, prepare.commit_of(repo, "HEAD"), work / "check", task, base)
    check_exit, _ = prepare.run_check(t["check"], work / "check", 60)
    traj = _trajectory(work / "traj.json")
    return {
        "name": t["name"],
        "solved": check_exit == 0,
        "claimed_done": traj["status"] == "Submitted",
        "status": traj["status"] or "no trajectory",
        "exit": None,
        "check_exit": check_exit,
        "model_calls": traj["calls"],
        "tool_calls": traj["actions"],
        "tokens": traj["tokens"],
        "wall_secs": secs,
    }


def _trajectory(path: Path) -> dict[str, Any]:
    """Calls, actions run, tokens (prompt + completion, as the server counted them) and the exit status."""
    found: dict[str, Any] = {"calls": 0, "actions": 0, "tokens": 0, "status": ""}
    if not path.exists():
        return found
    data = json.loads(path.read_text())
    found["status"] = data.get("info", {}).get("exit_status", "")
    for m in data.get("messages", []):
        extra = m.get("extra") or {}
        response = extra.get("response")
        if isinstance(response, dict):
            usage = response.get("usage") or {}
            found["calls"] += 1
            found["tokens"] += int(usage.get("prompt_tokens") or 0) + int(usage.get("completion_tokens") or 0)
        found["actions"] += len(extra.get("actions") or []) if m.get("role") == "assistant" else 0
    return found


def table(results: list[dict[str, Any]], tasks: list[BenchTask]) -> str:
    lines = [
        "| harness | solved | claimed done, check failed | model calls | tool calls | tokens | wall |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for h in results:
        if "skipped" in h:
            lines.append(f"| {h['harness']} | not run: {h['skipped']} | | | | | |")
            continue
        rows = h["rows"]
        claimed = sum(r["claimed_done"] and not r["solved"] for r in rows)
        lines.append(
            f"| {h['harness']} | {sum(r['solved'] for r in rows)} of {len(rows)} | {claimed} "
            f"| {sum(r['model_calls'] for r in rows)} | {sum(r['tool_calls'] for r in rows)} "
            f"| {sum(r['tokens'] for r in rows):,} | {sum(r['wall_secs'] for r in rows) / 60:.1f} min |"
        )
    ran = [h for h in results if "rows" in h]
    lines += ["", "| task | level | " + " | ".join(h["harness"] for h in ran) + " |"]
    lines.append("|---|---:|" + "---|" * len(ran))
    for t in tasks:
        cells = []
        for h in ran:
            r = next(r for r in h["rows"] if r["name"] == t["name"])
            cells.append(
                ("**solved**" if r["solved"] else "no") + f" ({r['status']}, {r['wall_secs']:.0f} s)"
            )
        lines.append(f"| {t['name']} | {t['level']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument(
        "--harness", default="openbot,mini", help=f"comma list of {', '.join([*PROTOCOLS, 'mini'])}"
    )
    p.add_argument("--tasks", default="", help="comma list of task names (default: all)")
    p.add_argument("--base-url", default="http://127.0.0.1:8089/v1")
    p.add_argument("--minutes", type=float, default=3.0, help="wall cap per task (openbot: max_minutes)")
    p.add_argument(
        "--mini-steps",
        type=int,
        default=12,
        help="mini-swe-agent's step_limit (openbot: 2 iterations x 6 steps)",
    )
    p.add_argument("--json", type=Path, help="write every row here")
    p.add_argument("--selftest", action="store_true", help="only prove the checks, run no harness")
    args = p.parse_args()
    wanted = [n for n in args.tasks.split(",") if n]
    tasks = [t for t in TASKS if not wanted or t["name"] in wanted]
    tmp = Path(tempfile.mkdtemp(prefix="bench-realmodel-"))
    selftest(tasks, tmp)
    if args.selftest:
        return
    results = []
    for name in args.harness.split(","):
        results.append(run_mini(tasks, args, tmp) if name == "mini" else run_openbot(name, tasks, args, tmp))
        if args.json:
            args.json.write_text(json.dumps(results, indent=2) + "\n")
    print(table(results, tasks))
    print(f"\n(work kept in {tmp})", file=sys.stderr)


if __name__ == "__main__":
    main()
