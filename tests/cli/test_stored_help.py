"""`openbot --help` without typer: the stored text is what typer renders, it is used only where typer would
print exactly it, and a stale one fails here (openbot/cli/stored_help.py, scripts/render_help.py)."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import shutil
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from openbot.cli import stored_help
from openbot.cli.commands import NAMES
from tests.helpers import read_pty

ROOT = Path(__file__).resolve().parents[2]
RENDER = ROOT / "scripts" / "render_help.py"
# What the console script pip writes runs: a file named `openbot` (click takes the usage line's name from it).
CONSOLE_SCRIPT = "import sys\nfrom openbot.cli.app import main\nsys.exit(main())\n"
NOT_ON_THE_HELP_PATH = ("typer", "rich", "pydantic", "httpx2", "pygit2", "openbot.cli.typer_app")


@pytest.fixture
def openbot_script(tmp_path: Path) -> Path:
    script = tmp_path / "bin" / "openbot"
    script.parent.mkdir()
    script.write_text(CONSOLE_SCRIPT)
    # The same entry as typer runs it, under the same name in the usage line.
    typer_path = (
        "import sys\nsys.argv[0] = 'openbot'\nfrom openbot.cli.typer_app import run\nrun(sys.argv[1:])\n"
    )
    script.with_name("typer-openbot").write_text(typer_path)
    return script


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in stored_help.RENDERING_ENV}
    return {**env, "PYTHONPATH": str(ROOT), **extra}


def _run(script: Path, args: list[str], **extra: str) -> subprocess.CompletedProcess[str]:
    """The console script with no terminal on stdin, stdout or stderr (as `openbot --help | less` from a
    script, CI, or a benchmark); -X importtime lists every module imported on stderr."""
    return subprocess.run(
        [sys.executable, "-X", "importtime", str(script), *args],
        env=_clean_env(**extra),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


def _imported(stderr: str) -> set[str]:
    return {line.split("|")[-1].strip() for line in stderr.splitlines() if line.startswith("import time:")}


def _own_stderr(stderr: str) -> str:
    return "".join(line + "\n" for line in stderr.splitlines() if not line.startswith("import time:"))


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["-h"],
        [],
        ["bots"],
        ["memory", "set", "--help"],
        ["--version"],
        *([name, "--help"] for name in NAMES),  # each command built alone by typer_app.run
    ],
    ids=" ".join,
)
def test_the_stored_help_is_what_typer_prints_and_imports_no_typer(
    openbot_script: Path, args: list[str]
) -> None:
    fast = _run(openbot_script, args)
    typer = _run(openbot_script.with_name("typer-openbot"), args)
    assert (fast.returncode, fast.stdout, _own_stderr(fast.stderr)) == (
        typer.returncode,
        typer.stdout,
        _own_stderr(typer.stderr),
    )
    assert fast.stdout.strip() and fast.returncode in (0, 2)
    loaded = _imported(fast.stderr)
    assert "openbot.cli.stored_help" in loaded
    assert [m for m in NOT_ON_THE_HELP_PATH if m in loaded] == []
    assert "typer" in _imported(typer.stderr)


def test_typer_renders_what_was_not_stored(openbot_script: Path) -> None:
    # A wider terminal (COLUMNS), an unknown command, `python -m openbot` (another usage line), a run.
    wide = _run(openbot_script, ["--help"], COLUMNS="120")
    assert "typer" in _imported(wide.stderr) and max(len(x) for x in wide.stdout.splitlines()) == 120
    unknown = _run(openbot_script, ["nosuch", "--help"])
    assert unknown.returncode == 2 and "No such command" in unknown.stderr
    assert "typer" in _imported(unknown.stderr)
    module = subprocess.run(
        [sys.executable, "-m", "openbot", "--help"],
        env=_clean_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert module.returncode == 0 and "Usage: python -m openbot" in module.stdout


def test_a_colour_terminal_gets_typer_in_colour(openbot_script: Path) -> None:
    # 80 columns, like the stored text: only the colour differs, and typer renders it.
    main, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    env = _clean_env(TERM="xterm-256color")
    proc = subprocess.Popen(
        [sys.executable, str(openbot_script), "--help"], env=env, stdin=child, stdout=child, stderr=child
    )
    os.close(child)
    out = read_pty(main)
    assert proc.wait(timeout=60) == 0
    assert b"\x1b[" in out and b"Usage" in out


def test_a_stale_stored_text_fails_the_check(tmp_path: Path) -> None:
    # The check that the shipped file is current runs at every landing: tests/test_code_shape.py.
    stale = tmp_path / "help.json"
    shutil.copy(stored_help.HELP_FILE, stale)
    data = json.loads(stale.read_text())
    code, index = data["argv"]["run --help"]
    data["texts"][index] = data["texts"][index].replace("Run a bot", "Run a robot")
    stale.write_text(json.dumps(data))
    check = subprocess.run(
        [sys.executable, str(RENDER), "--check", "--file", str(stale)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert check.returncode == 1
    assert "'openbot run --help'" in check.stderr and "render_help.py" in check.stderr
