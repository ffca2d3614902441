"""A finished command leaves without the interpreter's teardown, having done what the teardown must do.

The console entry point runs in a subprocess with a module-level object whose finalizer only the
teardown would run: it must not run (the teardown was skipped, no timing involved), while the atexit
handlers, a thread that is not a daemon, the output and the exit status all come out whole.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.helpers import complete, make_bot, reply

WRAPPER = """\
import atexit, sys, threading, time
out = sys.argv.pop(1)
def note(what, open=open, out=out):  # bound now: the teardown clears builtins and globals
    with open(out, "a") as f:
        f.write(what + "\\n")
atexit.register(note, "atexit")
class Teardown:
    def __del__(self, note=note):
        note("teardown")
keep = Teardown()  # a module global: only the interpreter's teardown frees it
def late():
    time.sleep(0.2)
    note("thread")
threading.Thread(target=late, daemon=False).start()
sys.argv[0] = "openbot"
from openbot.cli.app import main
sys.exit(main())
"""


def _openbot(tmp_path: Path, cwd: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    wrapper, notes = tmp_path / "openbot-wrapper.py", tmp_path / "notes.txt"
    wrapper.write_text(WRAPPER)
    out = subprocess.run(
        [sys.executable, str(wrapper), str(notes), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    return out, notes.read_text().split() if notes.exists() else []


def test_a_run_ends_without_the_teardown_with_its_output_status_and_exit_hooks_whole(
    tmp_path: Path, repo: Path
) -> None:
    make_bot("quick", [reply("", complete("all done", action="discard"))], config="max_iterations = 1")
    out, notes = _openbot(tmp_path, repo, "run", "quick", "--output", "jsonl")
    assert out.returncode == 0, out.stderr
    assert notes == ["thread", "atexit"]  # the thread joined first, then the handlers; no teardown
    events = [json.loads(line) for line in out.stdout.splitlines()]
    assert out.stdout.endswith("\n") and any("all done" in json.dumps(e) for e in events)
    assert [e["type"] for e in events].count("session_ended") == 1


def test_a_usage_error_keeps_its_exit_status_and_message(tmp_path: Path, repo: Path) -> None:
    out, notes = _openbot(tmp_path, repo, "run", "no-such-bot")
    assert out.returncode == 2 and "no-such-bot" in out.stderr
    assert notes == ["thread", "atexit"]


def test_help_leaves_the_same_way(tmp_path: Path, repo: Path) -> None:
    out, notes = _openbot(tmp_path, repo, "--help")
    assert out.returncode == 0 and "Usage" in out.stdout
    assert notes == ["thread", "atexit"]


def test_under_a_profiler_the_command_exits_as_python_does(tmp_path: Path, repo: Path) -> None:
    """cProfile writes its stats once main has returned: leaving at once would lose them."""
    stats = tmp_path / "stats.prof"
    out = subprocess.run(
        [sys.executable, "-m", "cProfile", "-o", str(stats), "-m", "openbot", "--help"],
        cwd=repo, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert out.returncode == 0 and "Usage" in out.stdout, out.stderr
    assert stats.stat().st_size > 0
