"""`--help` and `--version` answered without importing typer: the text typer renders, stored at build time.

`cli/help.json` holds what `openbot [command ...] --help|-h` (and a bare `openbot`/group, which prints
its help and exits 2) prints when typer renders it plainly: stdout not a terminal, 80 columns, no colour.
`scripts/render_help.py` writes it; `tests/cli/test_stored_help.py` fails when it is stale. The stored
text is used only where typer would print exactly it (`answer` below); anywhere else typer renders.
This module imports nothing beyond what Python has loaded at start-up.
"""

from __future__ import annotations

import json
import os
import sys

TYPE_CHECKING = False  # typing itself costs ~3 ms to import, more than the rest of this path
if TYPE_CHECKING:
    from typing import Any, NoReturn, TextIO

HELP_FILE = os.path.join(os.path.dirname(__file__), "help.json")
HELP_ARGS = ("--help", "-h")
WIDTH = 80  # rich's width when none of stdin, stdout, stderr is a terminal and COLUMNS is unset
# What typer or rich read from the environment to decide width, colour, rich or not, or completion.
RENDERING_ENV = (
    "COLUMNS",
    "TERMINAL_WIDTH",
    "FORCE_COLOR",
    "PY_COLORS",
    "NO_COLOR",
    "GITHUB_ACTIONS",
    "TTY_COMPATIBLE",
    "TTY_INTERACTIVE",
    "TYPER_USE_RICH",
    "_TYPER_FORCE_DISABLE_TERMINAL",
    "JUPYTER_COLUMNS",
    "DATABRICKS_RUNTIME_VERSION",
    "_OPENBOT_COMPLETE",
)


def answer(argv: list[str], prog: str, stdout: TextIO) -> tuple[int, str] | None:
    """(exit code, text) when the stored text is what typer would print for argv, else None."""
    if argv in (["--version"], ["-V"]):
        from openbot import __version__

        return 0, f"openbot {__version__}\n"
    if not could_be_help(argv):
        return None
    if os.path.basename(prog) != "openbot" or not _renders_plain(stdout):
        return None  # `python -m openbot` names itself differently in the usage line
    loaded = load()
    found = None if loaded is None else loaded[1]["argv"].get(" ".join(argv))
    return None if loaded is None or found is None else (found[0], loaded[1]["texts"][found[1]])


def could_be_help(argv: list[str]) -> bool:
    """Whether argv has the shape of what is stored: `[commands] --help|-h`, a bare group (a run's argv is
    never read against the file)."""
    return not argv or argv[-1] in HELP_ARGS or len(argv) == 1


def load() -> tuple[bytes, dict[str, Any]] | None:
    """help.json's bytes and contents; None when it cannot be read (typer renders then)."""
    try:
        with open(HELP_FILE, "rb") as f:
            raw = f.read()
        return raw, json.loads(raw.decode("utf-8"))
    except (OSError, ValueError):
        return None


def _renders_plain(stdout: TextIO) -> bool:
    """Whether rich would render at 80 columns without colour, as the stored text was."""
    if any(name in os.environ for name in RENDERING_ENV):
        return False
    if (getattr(stdout, "encoding", None) or "").lower().replace("-", "") != "utf8":
        return False  # rich draws the panels in ASCII then
    try:
        if stdout.isatty():
            return False
    except ValueError:
        return False
    for fd in (0, 1, 2):  # rich takes its width from the first of these that is a terminal
        try:
            if os.get_terminal_size(fd).columns not in (0, WIDTH):
                return False
        except (OSError, ValueError):
            continue
        break
    return True


def serve(argv: list[str]) -> bool:
    """Print the stored answer and exit; False when there is none (typer renders)."""
    found = answer(argv, sys.argv[0], sys.stdout)
    if found is None:
        return False
    emit(*found)


def emit(code: int, text: str) -> NoReturn:
    """Print a stored help text and exit with its status, as typer would."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:  # `openbot --help | head -1`: the reader went away, as typer would exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise SystemExit(1) from None
    raise SystemExit(code)
