"""`openbot digest`: the morning report over every bot and repository of this OPENBOT_HOME."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from openbot.cli.typer_app import app
from openbot.errors import UsageError

FORMATS = ("md", "html")


@app.command("digest")
def digest_command(
    sources: Optional[list[Path]] = typer.Argument(  # noqa: UP045
        None,
        help="run.json files or `run --json` summaries, or folders of them (default: OPENBOT_HOME's runs).",
    ),
    since: str = typer.Option("24h", "--since", help="Runs updated within this long: 90m, 24h, 7d, 2w."),
    fmt: str = typer.Option("md", "--format", help="md or html."),
    output: Optional[Path] = typer.Option(None, "-o", "--output", help="Write the report to FILE."),  # noqa: UP045
    as_json: bool = typer.Option(False, "--json", help="The rows and totals as JSON."),
) -> None:
    """What every bot did: status, verified or not, diffstat, cost, why it stopped, and what to do next."""
    from openbot.state import digest
    from openbot.views import digest as view

    if fmt not in FORMATS:
        raise UsageError(f"--format {fmt!r} is not one of {', '.join(FORMATS)}", hint="e.g. --format html")
    seconds = digest.parse_since(since)
    files = digest.named_records(sources) if sources else digest.home_records()
    rows = digest.collect(files, seconds)
    budget = _budget() if not sources else []
    if as_json:
        text = view.as_json(rows, since, budget=budget)
    else:
        text = view.html_page(rows, since) if fmt == "html" else view.markdown(rows, since, budget)
    if output is None:
        typer.echo(text, nl=False)
        return
    output.write_text(text, encoding="utf-8")
    typer.echo(f"wrote {output} ({len(rows)} runs)", err=True)


def _budget() -> list[dict[str, object]]:
    """This OPENBOT_HOME's caps and what counts against them now (docs/BUDGET.md); none without them."""
    from openbot.config.budgetcaps import load_caps, spending

    caps = load_caps()
    return spending(caps) if caps else []
