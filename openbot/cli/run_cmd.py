"""`openbot run <bot>`: the product's main job (openbot.run.plan checks, openbot.run.runner runs)."""

from __future__ import annotations

from typing import Optional

import typer

from openbot.cli.completion import bot_names
from openbot.cli.run_flow import RunArgs, start
from openbot.cli.typer_app import app


@app.command("run")
def run_command(
    bot: Optional[str] = typer.Argument(None, help="The bot to run.", autocompletion=bot_names),  # noqa: UP045 (typer needs Optional)
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
    attempts: int | None = typer.Option(
        None, "--attempts", min=1, help="Independent attempts; the first verified is kept (docs/VERIFY.md)."
    ),
    attempts_parallel: int | None = typer.Option(
        None, "--attempts-parallel", min=0, help="Attempts at once (0: 1 on a local server, else all)."
    ),
    seed: int | None = typer.Option(None, "--seed", help="Sampling seed (Chat Completions servers)."),
    feedback: Optional[str] = typer.Option(  # noqa: UP045
        None, "--feedback", help="A pull request's feedback.json to address (docs/ci.md, 'Feedback')."
    ),
) -> None:
    """Run a bot: iterate agent sessions in an isolated worktree until it completes or a limit is hit."""
    start(
        RunArgs(
            bot=bot,
            bot_opt=bot_opt,
            prompt=prompt,
            max_iterations=max_iterations,
            model=model,
            sleep_secs=sleep_secs,
            sandbox=sandbox,
            no_worktree=no_worktree,
            with_changes=with_changes,
            skip_git_check=skip_git_check,
            project=project,
            resume=resume,
            max_cost_usd=max_cost_usd,
            max_tokens=max_tokens,
            max_minutes=max_minutes,
            max_output_tokens=max_output_tokens,
            effort=effort,
            thinking=thinking,
            cache_ttl=cache_ttl,
            api_patience_minutes=api_patience_minutes,
            allow_unknown_price=allow_unknown_price,
            as_json=as_json,
            output=output,
            bot_source=bot_source,
            trust_repo_bots=trust_repo_bots,
            attempts=attempts,
            attempts_parallel=attempts_parallel,
            seed=seed,
            feedback=feedback,
        )
    )
