"""`openbot help [command…]`: the help of openbot or of a command. cli/app.py answers it before typer, as
`openbot <command…> --help` (stored text where it can); this registration lists it among the commands and
answers it where app.py does not (shell completion, an embedding program)."""

from __future__ import annotations

from typing import Optional

import typer

from openbot.cli.typer_app import app, build_command


@app.command("help")
def _help(
    command: Optional[list[str]] = typer.Argument(  # noqa: UP045 (typer needs Optional)
        None, metavar="COMMAND...", help="The command whose help to show (default: openbot's)."
    ),
) -> None:
    """Show the help of openbot or of a command: `openbot help bots show` is `openbot bots show --help`."""
    build_command()(args=[*(command or []), "--help"], prog_name="openbot")  # cli/app.py answers it first
