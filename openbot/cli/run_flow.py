"""`openbot run`'s work once its arguments are known, without typer: the request, the plan, the run with
its live view and signal guard, the report and the exit. `cli/run_cmd.py` is the typer command that hands
its options here; `openbot run <bot>` with nothing else comes here straight from the entry point
(`cli/app.py`), without typer: `RunArgs`'s defaults are the command's (tests/cli/test_startup_imports.py)."""

from __future__ import annotations

import errno
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from openbot.errors import OpenbotError, UsageError, debug_enabled, exit_code_of
from openbot.views.escapes import visible

if TYPE_CHECKING:
    from openbot.config.feedback import Feedback
    from openbot.run.plan import RunPlan, RunRequest
    from openbot.views.live import LiveView

OUTPUTS = ("text", "json", "jsonl")


@dataclass(frozen=True)
class RunArgs:  # `openbot run`'s options, each default the typer command's (a test compares them)
    bot: str | None = None
    bot_opt: str | None = None
    prompt: str = ""
    max_iterations: int | None = None
    model: str | None = None
    sleep_secs: float | None = None
    sandbox: str | None = None
    no_worktree: bool = False
    with_changes: bool = False
    skip_git_check: bool = False
    project: str | None = None
    resume: str | None = None
    max_cost_usd: float | None = None
    max_tokens: int | None = None
    max_minutes: float | None = None
    max_output_tokens: int | None = None
    effort: str | None = None
    thinking: str | None = None
    cache_ttl: str | None = None
    api_patience_minutes: float | None = None
    allow_unknown_price: bool = False
    as_json: bool = False
    output: str = "text"
    bot_source: str | None = None
    trust_repo_bots: bool = False
    attempts: int | None = None
    attempts_parallel: int | None = None
    seed: int | None = None
    feedback: str | None = None


def start(a: RunArgs) -> NoReturn:
    """Plan the run (every usage/config error surfaces there, before anything exists), run it, exit."""
    from openbot.run.plan import plan_run

    request, fmt = _request(a), _output_format(a.output, a.as_json)
    feedback = _feedback(a.feedback)  # a bad file: exit 2 before anything else is read
    plan = plan_run(request)
    if feedback is not None:
        from openbot.run.feedback import task_text

        plan.feedback, plan.task = feedback, "\n\n".join(filter(None, [plan.task, task_text(feedback)]))
    if plan.config.attempts > 1:
        _attempts(a, plan, fmt)
    _execute(plan, fmt)


def _feedback(given: str | None) -> Feedback | None:
    """The --feedback file, checked (config/feedback.py); None without one or without items to address."""
    from openbot.config.feedback import load_feedback

    found = load_feedback(Path(given).absolute()) if given is not None else None
    return found if found is not None and found.items else None


def _attempts(a: RunArgs, plan: RunPlan, output: str) -> NoReturn:
    """N attempts as N child runs; the first verified is kept (openbot/run/attempts.py)."""
    from dataclasses import asdict

    from openbot.config.model_names import parse_model
    from openbot.run.attempts import Attempts, check_attempts, child_argv, on_local_server, parallel_of

    count, c = plan.config.attempts, plan.config
    check_attempts(
        count, plan.resume is not None, plan.use_worktree, plan.verify.commands, plan.verify.merge_unverified
    )
    assert plan.repo is not None  # a run repository per attempt: check_attempts saw to it
    parallel = parallel_of(c.attempts_parallel, count, on_local_server(plan.model, c.base_url))
    argv, chat = child_argv(asdict(a)), parse_model(plan.model).backend == "chat"

    def attempt_argv(number: int) -> list[str]:
        """Attempt 2 on sends its own seed: a server with a fixed seed would repeat attempt 1 otherwise."""
        seed = ["--seed", str((c.seed or 0) + number - 1)] if chat and number > 1 else []
        return argv + seed

    runner = Attempts(attempt_argv, count, parallel, plan.repo, _say)
    if output == "jsonl":
        runner.forward = _write_out
    if parallel > 1:
        runner.logs = _attempt_logs()
        _say(f"{count} attempts, {parallel} at a time; their output: {runner.logs}")
    kept, ended = runner.run()
    summary = {k: v for k, v in kept.summary.items() if k not in ("type", "ts", "seq")}
    summary["attempts"] = [
        {
            "attempt": x.number,
            "status": x.summary.get("status"),
            "verified": x.summary.get("verified"),
            "kept": x is kept,
            "exit_code": x.exit_code,
        }
        for x in sorted(ended, key=lambda x: x.number)
    ]
    if output == "jsonl":
        _write_out((json.dumps({"type": "run_summary", **summary}) + "\n").encode())
    elif output == "json":
        print(json.dumps(summary, indent=2), flush=True)
    raise SystemExit(kept.exit_code)


def _say(line: str) -> None:
    print(visible(f"openbot: {line}"), file=sys.stderr, flush=True)


def _write_out(data: bytes) -> None:
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def _attempt_logs() -> Path:
    from datetime import UTC, datetime

    from openbot import paths

    logs = paths.home() / "attempts" / datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    logs.mkdir(parents=True, exist_ok=True)
    return logs


def direct(bot: str) -> NoReturn:
    """`openbot run <bot>` alone, from the entry point: what the typer app does around the command — an
    OpenbotError or OSError as one line and its exit code, ctrl-c before the run as click's 'Aborted!'."""
    try:
        start(RunArgs(bot=bot))
    except (OpenbotError, OSError) as e:
        code = said(e)
        if code is None:
            raise
        raise SystemExit(code) from None
    except (EOFError, KeyboardInterrupt):
        print("\nAborted!", file=sys.stderr)
        raise SystemExit(1) from None


def said(e: OpenbotError | OSError) -> int | None:
    """Say an error in one line on stderr and give its exit code; None: let it go on (OPENBOT_DEBUG=1
    shows the traceback; a reader that went away, `| head`, ends quietly)."""
    if debug_enabled():
        return None
    if isinstance(e, OpenbotError):
        # Messages may quote files the agent wrote (configs, skills, records): shown, not interpreted.
        print(visible(f"openbot: error: {e.one_line()}"), file=sys.stderr, flush=True)
        return exit_code_of(e)
    if e.errno == errno.EPIPE:
        return None
    where = f": {e.filename}" if e.filename else ""
    print(
        f"openbot: error: {e.strerror or e}{where} (OPENBOT_DEBUG=1 shows where)", file=sys.stderr, flush=True
    )
    return exit_code_of(e)


def _request(a: RunArgs) -> RunRequest:
    from openbot.run.plan import RunRequest

    name = a.bot or a.bot_opt
    if not name:
        raise UsageError("missing the bot name", hint="openbot run <bot> (see `openbot bots list`)")
    if a.bot and a.bot_opt and a.bot != a.bot_opt:
        raise UsageError(f"two different bots given: '{a.bot}' and '{a.bot_opt}'")
    given = {k: getattr(a, k) for k in CONFIG_FLAGS}
    extra = {k: v for k, v in given.items() if v is not None}  # None: not on the command line
    return RunRequest(
        bot=name,
        cwd=Path.cwd(),
        prompt=a.prompt,
        model=a.model,
        max_iterations=a.max_iterations,
        sleep_secs=a.sleep_secs,
        sandbox=a.sandbox,
        skip_git_check=a.skip_git_check or None,
        no_worktree=a.no_worktree,
        with_changes=a.with_changes,
        project=a.project,
        resume=a.resume,
        bot_source=a.bot_source,
        trust_repo_bots=a.trust_repo_bots,
        allow_unknown_price=a.allow_unknown_price,
        extra_flags=extra,
    )


# The config-backed flags: given on the command line, they win over the bot's config.
CONFIG_FLAGS = (
    "max_cost_usd",
    "max_tokens",
    "max_minutes",
    "max_output_tokens",
    "effort",
    "thinking",
    "cache_ttl",
    "api_patience_minutes",
    "attempts",
    "attempts_parallel",
    "seed",
)


def _output_format(output: str, as_json: bool) -> str:
    if output not in OUTPUTS:
        raise UsageError(f"--output {output!r} is not one of {', '.join(OUTPUTS)}")
    if as_json and output == "jsonl":
        raise UsageError(
            "--json and --output jsonl both write stdout", hint="drop --json: the jsonl stream ends with it"
        )
    return "json" if as_json else output


def _execute(plan: RunPlan, output: str) -> NoReturn:
    """Run the planned run with the live view and the signal guard, report it, exit with its code."""
    from openbot.run.inbox import Inbox
    from openbot.run.runner import run
    from openbot.run.signals import SignalGuard
    from openbot.stops import Cancel
    from openbot.views import ci_summary as ci
    from openbot.views.live import make_view
    from openbot.views.live_jsonl import JsonlView

    in_ci = ci.in_ci(os.environ)
    human = make_view(plan.redactor.redact, in_ci)
    view: LiveView | JsonlView = human
    if output == "jsonl":
        view = JsonlView(human, sys.stdout.fileno(), plan.redactor.redact)
    cancel = Cancel()
    guard = SignalGuard(cancel)
    guard.install()
    try:
        result = run(plan, view, Inbox.for_terminal(), guard, cancel)
    finally:
        guard.restore()
        view.close()
    from openbot.cli.run_report import report

    report(human, result, in_ci)
    if isinstance(view, JsonlView):
        view.summary(result.to_json())
    elif output == "json":
        print(json.dumps(result.to_json(), indent=2), flush=True)
    raise SystemExit(result.exit_code)
