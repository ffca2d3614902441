"""`openbot run <bot>`: the product's main job (openbot.run.plan checks, openbot.run.runner runs)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from openbot.cli.typer_app import app
from openbot.errors import UsageError
from openbot.views.fields import money, verified_text

OUTPUTS = ("text", "json", "jsonl")

if TYPE_CHECKING:
    from openbot.run.plan import RunPlan
    from openbot.run.result import RunResult
    from openbot.views.live import LiveView


@app.command("run")
def run_command(
    bot: Optional[str] = typer.Argument(None, help="The bot to run."),  # noqa: UP045 (typer needs Optional)
    bot_opt: Optional[str] = typer.Option(None, "--bot", "-b", help="The bot to run (same as the argument)."),  # noqa: UP045
    prompt: str = typer.Option("", "--prompt", "-p", help="The task for this run, added to every iteration."),
    max_iterations: int | None = typer.Option(None, "--max-iterations", "-n", min=0, help="0 = unlimited."),  # noqa: UP045
    model: Optional[str] = typer.Option(  # noqa: UP045
        None,
        "--model",
        "-m",
        help="A model of any backend: claude-…, openai:…, ollama:…, llamacpp:…, scripted:<path>.",
    ),  # noqa: UP045
    sleep_secs: float | None = typer.Option(
        None, "--sleep-secs", "--sleep", "-s", min=0, help="Pause between iterations."
    ),  # noqa: UP045
    sandbox: str | None = typer.Option(
        None, "--sandbox", help="workspace-write | read-only | danger-full-access."
    ),  # noqa: UP045
    no_worktree: bool = typer.Option(
        False, "--no-worktree", help="Work in the current checkout (no new branch)."
    ),
    with_changes: bool = typer.Option(
        False, "--with-changes", help="Carry your uncommitted changes into the worktree."
    ),
    skip_git_check: bool = typer.Option(
        False, "--skip-git-check", help="Allow running outside a git repository."
    ),
    project: Optional[str] = typer.Option(None, "--project", help="Project slug for memory and history."),  # noqa: UP045
    resume: str | None = typer.Option(
        None,
        "--resume",
        help="Continue a run by its id (same branch and conversation); alone or `last`: the bot's last run.",
    ),  # noqa: UP045
    max_cost_usd: float | None = typer.Option(
        None, "--max-cost-usd", min=0, help="Stop at this spend (USD)."
    ),  # noqa: UP045
    max_tokens: Optional[int] = typer.Option(  # noqa: UP045
        None, "--max-tokens", min=0, help="Stop at this many tokens (cache reads not counted)."
    ),
    max_minutes: float | None = typer.Option(None, "--max-minutes", min=0, help="Stop after this wall time."),  # noqa: UP045
    max_output_tokens: int | None = typer.Option(
        None, "--max-output-tokens", help="Output limit of one model call."
    ),  # noqa: UP045
    effort: Optional[str] = typer.Option(None, "--effort", help="low | medium | high | xhigh | max."),  # noqa: UP045
    thinking: Optional[str] = typer.Option(None, "--thinking", help="off | adaptive | a budget in tokens."),  # noqa: UP045
    cache_ttl: Optional[str] = typer.Option(None, "--cache-ttl", help="Prompt-cache TTL: auto | 5m | 1h."),  # noqa: UP045
    api_patience_minutes: float | None = typer.Option(
        None, "--api-patience-minutes", help="How long an unavailable API is waited out."
    ),  # noqa: UP045
    allow_unknown_price: bool = typer.Option(
        False, "--allow-unknown-price", help="Let max_cost_usd start on a model whose price is unknown."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON summary object on stdout at the end."),
    output: str = typer.Option(
        "text",
        "--output",
        "-o",
        help="text | json | jsonl: jsonl streams every event on stdout as it happens (docs/EVENTS.md).",
    ),
    bot_source: Optional[str] = typer.Option(  # noqa: UP045
        None, "--bot-source", help="home | repo: which bot runs where both have the name (default: home)."
    ),
    trust_repo_bots: bool = typer.Option(
        False, "--trust-repo-bots", help="Trust the repository's committed bots and skills (for CI)."
    ),
) -> None:
    """Run a bot: iterate agent sessions in an isolated worktree until it completes or a limit is hit."""
    from openbot.run.plan import RunRequest, plan_run

    name = bot or bot_opt
    if not name:
        raise UsageError("missing the bot name", hint="openbot run <bot> (see `openbot bots list`)")
    if bot and bot_opt and bot != bot_opt:
        raise UsageError(f"two different bots given: '{bot}' and '{bot_opt}'")
    budgets = {"max_cost_usd": max_cost_usd, "max_tokens": max_tokens, "max_minutes": max_minutes}
    extra = _given(
        **budgets,
        max_output_tokens=max_output_tokens,
        effort=effort,
        thinking=thinking,
        cache_ttl=cache_ttl,
        api_patience_minutes=api_patience_minutes,
    )
    req = RunRequest(
        bot=name,
        cwd=Path.cwd(),
        prompt=prompt,
        model=model,
        max_iterations=max_iterations,
        sleep_secs=sleep_secs,
        sandbox=sandbox,
        skip_git_check=skip_git_check or None,
        no_worktree=no_worktree,
        with_changes=with_changes,
        project=project,
        resume=resume,
        bot_source=bot_source,
        trust_repo_bots=trust_repo_bots,
        allow_unknown_price=allow_unknown_price,
        extra_flags=extra,
    )
    fmt = _output_format(output, as_json)
    _execute(plan_run(req), fmt)  # every usage/config error surfaces in plan_run, before anything exists


def _output_format(output: str, as_json: bool) -> str:
    if output not in OUTPUTS:
        raise UsageError(f"--output {output!r} is not one of {', '.join(OUTPUTS)}")
    if as_json and output == "jsonl":
        raise UsageError(
            "--json and --output jsonl both write stdout", hint="drop --json: the jsonl stream ends with it"
        )
    return "json" if as_json else output


def _execute(plan: RunPlan, output: str) -> None:
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
    _report(human, result, in_ci)
    if isinstance(view, JsonlView):
        view.summary(result.to_json())
    elif output == "json":
        typer.echo(json.dumps(result.to_json(), indent=2))
    raise typer.Exit(result.exit_code)


def _report(view: LiveView, result: RunResult, in_ci: bool) -> None:
    r = result.record
    lines = [
        f"openbot: run {r.run_id} {r.status}" + (f": {r.reason}" if r.reason else ""),
        f"  iterations {r.iterations} · commands {r.command_count} · tokens {sum(r.tokens.values()):,}"
        f" · cost {money(r.cost_usd, r.cost_known)}",
    ]
    if r.branch:
        lines.append(f"  branch {r.branch}" + (f" (from {r.base})" if r.base else ""))
    if r.summary:
        first = r.summary.split("\n", 1)[0]  # not splitlines: a `\r` in it is shown, not a line end
        lines.append(f"  summary: {first[:200]}")
    verified = verified_text(result.to_json())
    if verified:
        lines.append(f"  {verified}")
    if r.action:
        lines.append(f"  action: {r.action}" + (f" — {r.action_message}" if r.action_message else ""))
    if result.resume_command:
        lines.append(f"  resume: {result.resume_command}")
    for line in lines:
        view.line(line)
    if in_ci:
        from openbot.views.ci_summary import write_step_summary

        summary_path = os.environ.get("GITHUB_STEP_SUMMARY")
        if not write_step_summary(result.to_json(), os.environ) and summary_path:
            view.line(f"!! could not write the step summary to {summary_path}")


def _given(**flags: object) -> dict[str, object]:
    """The config-backed flags that were given (None: not on the command line)."""
    return {k: v for k, v in flags.items() if v is not None}
