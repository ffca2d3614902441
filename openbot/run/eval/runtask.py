"""One eval task: make its repository and home, run `openbot run` as a user would, check the result.

The run is a real `python -m openbot run <bot> --output jsonl` subprocess in the task's repository: its
stdout stream gives the counts (one `token_count` per model call, one `tool_call` per tool call) and its
last line the run summary. A task is solved only when its check command exits 0 in a clean clone of what
the run left — whatever the run said about itself.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

from openbot import gate
from openbot.errors import OpenbotError
from openbot.run.eval import prepare
from openbot.run.eval.check import Walls, run_check
from openbot.run.eval.suite import Task

GRACE_SECS = 120  # past max_minutes: the run's own limit fires first; this only catches a hung run
STOP_SECS = 60  # after SIGTERM: time to bring the work home before SIGKILL


@dataclass
class TaskResult:
    name: str
    solved: bool = False
    check_exit: int | None = None
    exit_code: int | None = None
    status: str = "not run"
    verified: str = ""  # the run's own word on its check (verified / unverified), when it gives one
    claimed_done: bool = False  # the run ended `completed` (exit 0)
    model_calls: int = 0
    tool_calls: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    cost_known: bool = True
    wall_secs: float = 0.0
    branch: str = ""
    checked: str = ""  # the commit the check ran on
    error: str = ""  # why the task did not run or could not be checked
    check_output: str = ""
    summary: str = ""
    extra: dict[str, object] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def run_task(
    task: Task,
    bot: str,
    workdir: Path,
    run_args: tuple[str, ...] = (),
    walls: Walls | None = None,
    check_as_verify: bool = False,
) -> TaskResult:
    """Run `bot` on `task` under `workdir` (made fresh) and judge the result by the task's check, run in
    `walls` (the bot's sandbox settings: check.py); `check_as_verify`: the check is also the bot's `verify`
    for the run (openbot checks the work with it at session_complete)."""
    result = TaskResult(task.name)
    workdir.mkdir(parents=True)
    repo = workdir / "repo"
    try:
        home, _ = prepare.make_home(bot, workdir / "home")  # what it left out was said once, up front
        if check_as_verify:
            verify_with(home / "bots" / bot / "config.md", task.check)
        base = prepare.make_repo(task, repo)
    except OpenbotError as e:
        result.error = e.one_line()
        return result
    started = time.monotonic()
    summary, counts = _openbot_run(task, bot, repo, home, workdir / "run.log", run_args)
    result.wall_secs = round(time.monotonic() - started, 1)
    _take_summary(result, summary, counts)
    if summary.get("status") in (None, "error"):  # the run never started (a config error, say): say why
        lines = (workdir / "run.log").read_text(errors="replace").strip().splitlines()
        why = summary.get("reason") or (lines[-1] if lines else "(no output)")
        result.error = f"openbot run exited {result.exit_code}: {why}"
    try:
        commit, result.branch = prepare.result_commit(repo, str(summary.get("branch") or ""))
        prepare.check_out(repo, commit, workdir / "check", workdir / "check.git", task, base)
    except OpenbotError as e:
        result.error = f"could not check out the result: {e.one_line()}"
        return result
    result.checked = commit[:12]
    try:
        result.check_exit, result.check_output = run_check(
            task.check, walls or Walls(), workdir / "check", workdir / "check.git", workdir / "check-tmp",
            task.limits.check_timeout_secs,
        )  # fmt: skip
    except OpenbotError as e:  # the machine lost what the probe found (bwrap removed mid-eval)
        result.error = f"the check did not run: {e.one_line()}"
    result.solved = result.check_exit == 0
    return result


def verify_with(config: Path, check: str) -> None:
    """The task's copy of the bot's config.md with `verify = [check]` (its other keys as they were)."""
    import tomlkit

    from openbot.config.frontmatter import split_frontmatter

    fm, body = split_frontmatter(config.read_text(encoding="utf-8"), config)
    doc = tomlkit.parse(fm or "")
    doc["verify"] = [check]
    config.write_text(f"+++\n{tomlkit.dumps(doc).strip()}\n+++\n{body}", encoding="utf-8")


def _openbot_run(
    task: Task, bot: str, repo: Path, home: Path, log: Path, run_args: tuple[str, ...]
) -> tuple[dict[str, object], dict[str, int]]:
    """`openbot run` in the task's repository; returns its summary record and event counts."""
    argv = [sys.executable, "-P", "-m", "openbot", "run", bot, "--prompt", task.prompt, "--output", "jsonl"]
    argv += [*task.limits.run_flags(), *run_args]
    env = {**os.environ, "OPENBOT_HOME": str(home)}
    limit = task.limits.max_minutes
    timeout = limit * 60 + GRACE_SECS if limit is not None else None
    counts = {"token_count": 0, "tool_call": 0}
    summary: dict[str, object] = {}
    with log.open("w") as stderr:
        proc = gate.popen(
            gate.EVAL_RUN,
            argv,
            cwd=repo,
            env=env,
            stdin=gate.DEVNULL,
            stdout=gate.PIPE,
            stderr=stderr,
            text=True,
        )
        if timeout is not None:
            threading.Thread(target=_watchdog, args=(proc, timeout), daemon=True).start()
        assert proc.stdout is not None
        for record in _records(proc.stdout):
            kind = record.get("type")
            if kind in counts:
                counts[str(kind)] += 1
            elif kind == "run_summary":
                summary = record
        code = proc.wait()
    summary.setdefault("exit_code", code)
    return summary, counts


def _records(stream: IO[str]) -> Iterator[dict[str, object]]:
    for line in stream:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict):
            yield record


def _watchdog(proc: gate.Popen[str], secs: float) -> None:
    """A run past its wall cap is stopped as ctrl-c would (SIGTERM: it brings its work home), then killed."""
    try:
        proc.wait(timeout=secs)
        return
    except gate.TimeoutExpired:
        proc.terminate()
    try:
        proc.wait(timeout=STOP_SECS)
    except gate.TimeoutExpired:
        proc.kill()


def _take_summary(result: TaskResult, summary: dict[str, Any], counts: dict[str, int]) -> None:
    result.exit_code = summary.get("exit_code")
    result.status = str(summary.get("status") or "no summary")
    result.claimed_done = result.exit_code == 0
    result.model_calls = counts["token_count"]
    result.tool_calls = counts["tool_call"]
    tokens = summary.get("tokens") or {}
    result.tokens = sum(v for v in tokens.values() if isinstance(v, int))
    result.cost_usd = float(summary.get("cost_usd") or 0.0)
    result.cost_known = bool(summary.get("cost_known", True))
    result.summary = str(summary.get("summary") or "")[:500]
    result.verified = _verified(summary)


def _verified(summary: dict[str, object]) -> str:
    """The run's own verification word (issue 24: a `verify` command's outcome), when it reports one."""
    status = str(summary.get("status") or "")
    if status in ("verified", "unverified"):
        return status
    found = summary.get("verified", summary.get("verification"))
    if isinstance(found, bool):
        return "verified" if found else "unverified"
    if isinstance(found, dict):
        found = found.get("status")
    return str(found) if isinstance(found, str) else ""
