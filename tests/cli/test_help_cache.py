"""`openbot --help` in a terminal: the second time it is what typer printed the first time, byte for byte,
without importing typer or rich; another width or colour setting renders afresh; a damaged entry is
rendered again; only help is kept (openbot/cli/help_cache.py). Through the real console script in a pty."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from openbot.cli import help_cache, stored_help
from tests.helpers import read_pty

ROOT = Path(__file__).resolve().parents[2]
# The console script pip writes, under the name `openbot`; at exit (app.leave runs the atexit handlers) it
# lists the modules that were loaded, so imports are counted, never timed.
CONSOLE_SCRIPT = """import atexit, os, sys
def _dump():
    with open(os.environ["MODULES_FILE"], "w") as f:
        f.write("\\n".join(sorted(sys.modules)))
atexit.register(_dump)
from openbot.cli.app import main
sys.exit(main())
"""
# typer itself, under the same name in the usage line: what a terminal gets without any cache.
TYPER_SCRIPT = (
    "import sys\nsys.argv[0] = 'openbot'\nfrom openbot.cli.typer_app import run\nrun(sys.argv[1:])\n"
)
HEAVY = ("typer", "rich", "pydantic", "openbot.cli.typer_app")


class Terminal:
    """Runs the scripts in a fresh pty of a given size; stdin, stdout and stderr are the terminal."""

    def __init__(self, tmp_path: Path) -> None:
        self.bin = tmp_path / "bin"
        self.bin.mkdir()
        (self.bin / "openbot").write_text(CONSOLE_SCRIPT)
        (self.bin / "typer-openbot").write_text(TYPER_SCRIPT)
        self.modules_file = tmp_path / "modules"
        self.cache = Path(os.environ["XDG_CACHE_HOME"]) / "openbot" / "help"  # conftest: a temp dir

    def run(
        self, args: list[str], columns: int = 100, rows: int = 30, script: str = "openbot", **env: str
    ) -> tuple[int, bytes, set[str]]:
        """(exit status, every byte the terminal received, the modules loaded)."""
        self.modules_file.unlink(missing_ok=True)
        main, child = pty.openpty()
        fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        base = {k: v for k, v in os.environ.items() if k not in stored_help.RENDERING_ENV}
        full_env = {**base, "PYTHONPATH": str(ROOT), "TERM": "xterm-256color", **env}
        full_env["MODULES_FILE"] = str(self.modules_file)
        program = ["-m", "openbot"] if script == "-m" else [str(self.bin / script)]
        proc = subprocess.Popen(
            [sys.executable, *program, *args],
            env=full_env,
            stdin=child,
            stdout=child,
            stderr=child,
        )
        os.close(child)
        out = read_pty(main)
        code = proc.wait(timeout=120)
        loaded = set(self.modules_file.read_text().split("\n")) if self.modules_file.exists() else set()
        return code, out, loaded

    def entries(self) -> list[Path]:
        return sorted(self.cache.glob("*.json")) if self.cache.is_dir() else []


@pytest.fixture
def terminal(tmp_path: Path) -> Terminal:
    return Terminal(tmp_path)


def _heavy(loaded: set[str]) -> list[str]:
    return [m for m in HEAVY if m in loaded]


@pytest.mark.parametrize("args", [["--help"], ["run", "-h"], ["memory"]], ids=" ".join)
def test_the_second_help_in_a_terminal_is_the_first_without_typer(
    terminal: Terminal, args: list[str]
) -> None:
    first = terminal.run(args)
    second = terminal.run(args)
    typer = terminal.run(args, script="typer-openbot")
    assert first[1] == second[1] == typer[1]  # byte for byte, colours and all
    assert first[0] == second[0] == typer[0] == (2 if args == ["memory"] else 0)  # a bare group exits 2
    assert b"\x1b[" in first[1] and b"Usage" in first[1]
    assert "typer" in first[2] and "rich" in first[2]
    assert "openbot.cli.help_cache" in second[2] and _heavy(second[2]) == []
    assert len(terminal.entries()) == 1


def test_another_width_or_colour_setting_renders_afresh(terminal: Terminal) -> None:
    terminal.run(["--help"], columns=100)
    cases = [
        ({"columns": 120}, {}),
        ({}, {"NO_COLOR": "1"}),
        ({}, {"TERM": "xterm"}),  # 8 colours instead of 256
        ({}, {"COLORTERM": "truecolor"}),
        ({}, {"FORCE_COLOR": "1"}),
    ]
    outputs = set()
    for size, env in cases:
        code, out, loaded = terminal.run(["--help"], **size, **env)  # type: ignore[arg-type]
        again = terminal.run(["--help"], **size, **env)  # type: ignore[arg-type]
        typer = terminal.run(["--help"], script="typer-openbot", **size, **env)  # type: ignore[arg-type]
        assert "typer" in loaded, (size, env)  # rendered, not served from another key
        assert out == again[1] == typer[1] and code == again[0] == typer[0] == 0, (size, env)
        assert _heavy(again[2]) == [], (size, env)
        outputs.add(out)
    assert len(outputs) >= 3  # the settings do change the rendering (NO_COLOR at 100 columns, say)
    assert len(terminal.entries()) == 1 + len(cases)


def test_python_m_openbot_is_kept_apart_from_the_console_script(terminal: Terminal) -> None:
    # click names the program from sys.argv[0] and __main__'s package: another usage line, another key.
    script = terminal.run(["--help"])
    module = terminal.run(["--help"], script="-m")
    again = terminal.run(["--help"], script="-m")
    assert b"python \x1b[0m\x1b[1;32m-m" in module[1] and b"python " not in script[1]  # `-m` in colour
    assert again[:2] == module[:2] and len(terminal.entries()) == 2


def test_the_height_does_not_change_typers_rendering(terminal: Terminal) -> None:
    # Why the key leaves the terminal's height out (help_cache._width).
    short = terminal.run(["run", "--help"], rows=10, script="typer-openbot")
    tall = terminal.run(["run", "--help"], rows=80, script="typer-openbot")
    assert short == tall and short[0] == 0


def test_a_damaged_or_foreign_entry_is_rendered_again(terminal: Terminal) -> None:
    good = terminal.run(["--help"])
    [entry] = terminal.entries()
    kept = entry.read_bytes()
    for damage in (b"", b"{not json", kept[: len(kept) // 2], b'{"key": 1, "code": 0, "text": "forged"}'):
        entry.write_bytes(damage)
        again = terminal.run(["--help"])
        assert again[:2] == good[:2] and "typer" in again[2]  # rendered, no error, same bytes
        assert entry.read_bytes() == kept  # and kept again
    entry.chmod(0o666)  # writable by others: not taken as the user's own
    assert "typer" in terminal.run(["--help"])[2]
    assert entry.stat().st_mode & 0o777 == 0o600


def test_a_cache_that_cannot_be_written_means_no_cache(terminal: Terminal, tmp_path: Path) -> None:
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("")
    for _ in range(2):
        code, out, loaded = terminal.run(["--help"], XDG_CACHE_HOME=str(not_a_dir))
        assert code == 0 and b"Usage" in out and b"rror" not in out and "typer" in loaded


def test_only_help_is_kept(terminal: Terminal) -> None:
    unknown = terminal.run(["nosuch", "--help"])
    assert unknown[0] == 2 and b"No such command" in unknown[1]
    listed = terminal.run(["bots", "list"])
    assert listed[0] == 0
    version = terminal.run(["--version"])
    assert version[0] == 0 and b"openbot " in version[1]
    assert terminal.entries() == []


def test_the_cache_keeps_the_newest_entries_only(tmp_path: Path) -> None:
    # Keys change with every width, terminal and version: the directory must not grow without bound.
    for n in range(help_cache.KEEP + 5):
        entry = tmp_path / f"{n:04d}.json"
        entry.write_text("{}")
        os.utime(entry, ns=(n * 10**9, n * 10**9))
    help_cache._prune(str(tmp_path))
    left = sorted(p.name for p in tmp_path.glob("*.json"))
    assert len(left) == help_cache.KEEP and left[0] == "0005.json"


def test_the_directory_and_entries_are_the_users_alone(terminal: Terminal) -> None:
    terminal.run(["--help"])
    [entry] = terminal.entries()
    assert entry.stat().st_mode & 0o777 == 0o600 and terminal.cache.stat().st_mode & 0o777 == 0o700
