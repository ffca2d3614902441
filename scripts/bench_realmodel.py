"""The real-model benchmark: openbot, aider and mini-swe-agent on the same tasks, the same local model and
server, the same checks. Not a test: it needs the model server and takes an hour or more.

    ../shared/realmodel/serve.sh start       # Qwen2.5-Coder-1.5B on 127.0.0.1:8089 (docs/BENCHMARKS.md)
    python3 -m venv /work/bench-tools/aider && /work/bench-tools/aider/bin/pip install aider-chat==0.86.2
    python3 -m venv /work/bench-tools/mswea && /work/bench-tools/mswea/bin/pip install mini-swe-agent
    python scripts/bench_realmodel.py [--sets A,B] [--harness openbot,aider,mini] [--minutes 4] [--json f]

Task sets (scripts/bench_sets.py): A, six small tasks written for this benchmark; B, fixes from two small
libraries' history made by `openbot eval --from-history`; suite, the project's older 11 tasks.
One task at a time, the harnesses in turn on each task. A task counts as solved only when its check — run
here, by this script, in a clean clone of what the harness left (committed or not; B: the commit's own
tests put back first) — exits 0. Before any harness runs, each check is proved to fail on the untouched
repository and to pass after the reference fix (B: the original commit). Each row records the harness's
exit code, whether it said it was done, and whether it said that nothing checked its work: a "false done"
is a claimed done on failing work that did not say so. The load average goes with every row.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_harnesses import HARNESSES, Outcome  # noqa: E402
from bench_sets import Item, set_a, set_b, suite_set  # noqa: E402

from openbot.run.eval import prepare  # noqa: E402
from openbot.run.eval.suite import Limits  # noqa: E402

SETS = {"A": set_a, "B": set_b, "suite": suite_set}


def check(item: Item, repo: Path, commit: str, dest: Path) -> tuple[int | None, str]:
    """The task's check on a clean clone of `repo` at `commit`: this script's own judgement."""
    subprocess.run(["git", "clone", "-q", "--no-checkout", str(repo), str(dest)], check=True)
    subprocess.run(["git", "-C", str(dest), "checkout", "-q", "--detach", commit], check=True)
    for path in item.task.check_paths:  # B: the commit's own tests, whatever the harness did to them
        subprocess.run(["git", "-C", str(dest), "checkout", "-q", item.task.base, "--", path], check=True)
    try:
        proc = subprocess.run(
            ["bash", "-c", item.task.check],
            cwd=dest,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
        )
    except subprocess.TimeoutExpired:
        return None, "timed out"
    return proc.returncode, (proc.stdout + proc.stderr)[-600:]


def selftest(items: list[Item], tmp: Path) -> None:
    """Each check fails on the untouched repository and passes after the reference fix: else stop here."""
    for item in items:
        work = tmp / "selftest" / item.task.name.split()[0]
        repo = work / "repo"
        prepare.make_repo(item.task, repo)
        before, _ = check(item, repo, "HEAD", work / "before")
        if item.solve:
            subprocess.run(["bash", "-c", item.solve], cwd=repo, check=True)
            subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
            subprocess.run(["git", *prepare.IDENTITY, "commit", "-qm", "fix"], cwd=repo, check=True)
        fixed = "HEAD" if item.solve else item.task.base
        after, out = check(item, repo, fixed, work / "after")
        if before == 0 or after != 0:
            sys.exit(f"selftest: {item.task.name}: check exits {before} untouched, {after} fixed: {out}")
    print(f"selftest: {len(items)} checks fail untouched and pass after the fix", file=sys.stderr)


def one(harness: str, item: Item, args: argparse.Namespace, work: Path) -> dict[str, Any]:
    load = os.getloadavg()[0]
    work.mkdir(parents=True)
    try:
        o: Outcome = HARNESSES[harness](item, work, args.base_url, args.minutes)
    except (RuntimeError, subprocess.CalledProcessError) as e:
        return {"harness": harness, "task": item.task.name, "set": item.set, "error": str(e), "solved": False}
    check_exit, out = check(item, o.repo, o.commit, work / "check")
    solved = check_exit == 0
    return {
        "harness": harness,
        "set": item.set,
        "task": item.task.name,
        "solved": solved,
        "check_exit": check_exit,
        "check_tail": "" if solved else out[-300:],
        "exit": o.exit,
        "claimed_done": o.claimed_done,
        "said_unchecked": o.said_unchecked,
        "false_done": o.claimed_done and not solved and not o.said_unchecked,
        "exit0_failing": o.exit == 0 and not solved,
        "status": o.status,
        "wall_secs": o.wall_secs,
        "load_before": round(load, 2),
        "load_after": round(os.getloadavg()[0], 2),
        **o.info,
    }


def table(rows: list[dict[str, Any]], harnesses: list[str], sets: list[str]) -> str:
    lines = [
        "| set | harness | solved | exit 0 on failing work | false done (said nothing) | wall | load avg |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    for s in sets:
        for h in harnesses:
            rs = [r for r in rows if r["harness"] == h and r["set"] == s]
            if not rs:
                continue
            loads = [r.get("load_before", 0) for r in rs]
            failing = sum(r.get("exit0_failing", False) for r in rs)
            false_done = sum(r.get("false_done", False) for r in rs)
            minutes = sum(r.get("wall_secs", 0) for r in rs) / 60
            lines.append(
                f"| {s} | {h} | **{sum(r['solved'] for r in rs)} of {len(rs)}** | {failing} | {false_done} "
                f"| {minutes:.1f} min | {min(loads):.1f}–{max(loads):.1f} |"
            )
    lines += ["", "| task | " + " | ".join(harnesses) + " |", "|---|" + "---|" * len(harnesses)]
    for name in dict.fromkeys(r["task"] for r in rows):
        cells = []
        for h in harnesses:
            r = next((r for r in rows if r["harness"] == h and r["task"] == name), None)
            cells.append(_cell(r))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _cell(r: dict[str, Any] | None) -> str:
    if r is None:
        return ""
    if r.get("error") and "check_exit" not in r:
        return f"error: {r['error'][:60]}"
    word = "**solved**" if r["solved"] else ("no, **false done**" if r["false_done"] else "no")
    return f"{word} (exit {r['exit']}, {r['status']}, {r['wall_secs']:.0f} s, load {r['load_before']:.1f})"


def main() -> None:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    p.add_argument("--sets", default="A,B", help="comma list of A, B, suite")
    p.add_argument("--harness", default="openbot,aider,mini", help=f"comma list of {', '.join(HARNESSES)}")
    p.add_argument("--tasks", default="", help="comma list of task names (B: the commit's short sha)")
    p.add_argument("--base-url", default="http://127.0.0.1:8089/v1")
    p.add_argument("--minutes", type=float, default=4.0, help="wall cap per task and harness")
    p.add_argument("--json", type=Path, help="write every row here (after each task)")
    p.add_argument("--selftest", action="store_true", help="only prove the checks, run no harness")
    p.add_argument("--keep", action="store_true", help="keep the work directory")
    p.add_argument("--table-from", default="", help="comma list of --json files: print their rows' tables")
    args = p.parse_args()
    if args.table_from:
        rows = [r for f in args.table_from.split(",") for r in json.loads(Path(f).read_text())]
        harnesses = list(dict.fromkeys(r["harness"] for r in rows))
        print(table(rows, harnesses, list(dict.fromkeys(r["set"] for r in rows))))
        return
    limits = Limits(max_minutes=args.minutes, check_timeout_secs=120)
    sets = args.sets.split(",")
    wanted = {n for n in args.tasks.split(",") if n}
    items = [i for s in sets for i in SETS[s](limits) if not wanted or wanted & {i.task.name, i.sha}]
    tmp = Path(tempfile.mkdtemp(prefix="bench-realmodel-"))
    selftest(items, tmp)
    if args.selftest:
        return
    harnesses = args.harness.split(",")
    rows: list[dict[str, Any]] = []
    for n, item in enumerate(items, 1):
        for h in harnesses:
            print(f"bench: [{n}/{len(items)}] {item.task.name[:40]} {h} …", file=sys.stderr, flush=True)
            rows.append(one(h, item, args, tmp / h / f"{n:02d}"))
            print(f"bench:   {_cell(rows[-1])}", file=sys.stderr, flush=True)
            if args.json:
                args.json.write_text(json.dumps(rows, indent=2) + "\n")
    print(table(rows, harnesses, sets))
    if args.keep:
        print(f"\n(work kept in {tmp})", file=sys.stderr)
    else:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
