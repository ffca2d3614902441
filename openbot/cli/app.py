"""The `openbot` console entry point: help and the version from stored text where typer would print exactly
that (`cli/stored_help.py`: no typer, rich or pydantic imported), help in a terminal from what typer
rendered there before (`cli/help_cache.py`), everything else through the typer app.

A command that has finished leaves at once (`leave`): the interpreter's teardown frees a run's ~40,000
objects module by module, 40–150 ms after everything was done and said, which no user waits for."""

from __future__ import annotations

import os
import sys
from typing import NoReturn


def main() -> None:
    from openbot.cli import stored_help

    argv = sys.argv[1:]
    try:
        if _bare_run(argv):  # `openbot run <bot>`: typer would only pass the name on (cli/run_flow.py)
            from openbot.cli.run_flow import direct

            direct(argv[1])
        if argv[:1] == ["help"] and not any(a.startswith("-") for a in argv):  # `help run`: run's --help
            argv = [*argv[1:], "--help"]
        if not stored_help.serve(argv):
            entry = None
            if stored_help.could_be_help(argv):
                from openbot.cli import help_cache

                entry = help_cache.serve(argv)  # exits when it has this terminal's rendering
            from openbot.cli.typer_app import run

            if entry is None:
                run(argv)
            else:
                help_cache.record(entry, lambda: run(argv))
    except SystemExit as e:
        leave(e.code)
    leave(0)


def _bare_run(argv: list[str]) -> bool:
    """`openbot run <bot>` and nothing else: no option, no shell completion asking."""
    return (
        len(argv) == 2
        and argv[0] == "run"
        and not argv[1].startswith("-")
        and "_OPENBOT_COMPLETE" not in os.environ
    )


def leave(code: object) -> NoReturn:
    """Exit with `code` as `sys.exit(code)` would, without the teardown. What the teardown does that
    matters is done first, in the interpreter's order: the threads' shutdown (their exit hooks, and
    threads that are not daemons joined), the atexit handlers (temporary directories among them),
    stdout and stderr flushed. Every file openbot writes is written whole (and closed) before this."""
    import atexit
    import os
    import threading

    if sys.getprofile() is not None or sys.gettrace() is not None:
        raise SystemExit(code)  # a profiler or coverage writes what it found once main has returned
    status = code if isinstance(code, int) else 0 if code is None else 1
    if not isinstance(code, int) and code is not None:
        print(code, file=sys.stderr)  # as sys.exit prints a message given instead of a status
    shutdown = getattr(threading, "_shutdown", None)  # the interpreter's own first step
    if shutdown is not None:
        shutdown()
    else:
        for thread in threading.enumerate():
            if thread is not threading.main_thread() and not thread.daemon:
                thread.join()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (`openbot … | head`): as Python, exit 120
            status = status or 120
    os._exit(status)
