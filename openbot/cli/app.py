"""The `openbot` console entry point: help and the version from stored text where typer would print exactly
that (`cli/stored_help.py`: no typer, rich or pydantic imported), everything else through the typer app."""

from __future__ import annotations

import sys


def main() -> None:
    from openbot.cli import stored_help

    argv = sys.argv[1:]
    if not stored_help.serve(argv):
        from openbot.cli.typer_app import run

        run(argv)
