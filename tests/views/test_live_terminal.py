"""The live view in a real terminal (a pty): while a long command runs, the status line shows how long the
run and the command have taken and the command's last output lines. Through the real CLI."""

from __future__ import annotations

import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.helpers import complete, make_bot, reply, shell

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r")


def _read_until(fd: int, pattern: re.Pattern[str], seen: list[str], limit_secs: float = 90) -> str:
    """The terminal's text (escapes stripped) once `pattern` shows in it; a generous bound, not a timing."""
    end = time.monotonic() + limit_secs
    while time.monotonic() < end:
        ready, _, _ = select.select([fd], [], [], 1)
        if ready:
            try:
                seen.append(os.read(fd, 65536).decode("utf-8", "replace"))
            except OSError:
                break
        text = ANSI.sub("", "".join(seen))
        if pattern.search(text):
            return text
    shown = ANSI.sub("", "".join(seen))
    raise AssertionError(f"{pattern.pattern!r} never showed; the terminal had:\n{shown}")


def test_a_long_command_shows_elapsed_time_and_its_last_output_lines(repo: Path) -> None:
    make_bot(
        "slowpoke",
        [reply("", shell("echo first-line; echo second-line; sleep 120")), reply("", complete("ok"))],
    )
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "GITHUB_ACTIONS", "NO_COLOR")}
    env.update(TERM="xterm-256color", COLUMNS="160", LINES="40")
    proc = subprocess.Popen(
        [sys.executable, "-m", "openbot", "run", "slowpoke"],
        cwd=repo,
        env=env,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        start_new_session=True,
    )
    os.close(slave)
    seen: list[str] = []
    try:
        text = _read_until(master, re.compile(r"│ second-line"), seen)
        # the run's clock, the step, the command and its own clock, on the status line
        command = r"echo first-line; echo second-line; sleep 120"
        assert re.search(rf"\d+s · step \d+ · running \$ {command} \d+s", text)
        assert "│ first-line" in text
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=120)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
            os.close(master)
    assert proc.returncode == 130
