"""`openbot fleet run fleet.toml`: many repositories × bots on one machine, with a concurrency limit."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from openbot.cli.typer_app import app
from openbot.errors import UsageError

fleet_app = typer.Typer(
    name="fleet", help="Run many repositories × bots on this machine.", no_args_is_help=True
)
app.add_typer(fleet_app)


@fleet_app.command("run")
def fleet_run(
    fleet_file: Path = typer.Argument(..., help="The fleet.toml: repositories and bots (docs/FLEET.md)."),
    parallel: Optional[int] = typer.Option(None, "--parallel", help="Runs at a time (default: the file's)."),  # noqa: UP045
    as_json: bool = typer.Option(False, "--json", help="The roll-up as JSON (rows, totals, exit codes)."),
) -> None:
    """Each run as `openbot run <bot> --json` in its repository; then the digest's roll-up. Exit 0 only
    when every run exited 0."""
    from openbot.config.fleet import load_fleet
    from openbot.run.fleet import fleet_exit_code, run_fleet
    from openbot.views import digest as view

    if parallel is not None and parallel < 1:
        raise UsageError(f"--parallel {parallel} must be 1 or more")
    fleet = load_fleet(fleet_file)
    rows = run_fleet(fleet, parallel or fleet.parallel)
    code = fleet_exit_code(rows)
    if as_json:
        typer.echo(view.as_json(rows, view.FLEET, exit_code=code))
    else:
        typer.echo(view.table(rows, view.FLEET), nl=False)
    raise typer.Exit(code)
