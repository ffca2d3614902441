"""The everyday conveniences a new user looks for (issue 35): `-V`, `openbot help [command…]`, `bots edit`
($VISUAL/$EDITOR, then the config is checked), bot names completed by the shell, and usage lines that
name an argument `BOT` (typer 0.29 wrote a required one `{BOT}`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from openbot import __version__, paths
from tests.helpers import make_bot, run_cli

CONSOLE_SCRIPT = "import sys\nfrom openbot.cli.app import main\nsys.exit(main())\n"


def console(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The `openbot` console script as pip writes it (click takes the program's name from the file)."""
    script = tmp_path / "bin" / "openbot"
    script.parent.mkdir(exist_ok=True)
    script.write_text(CONSOLE_SCRIPT)
    return subprocess.run(
        [sys.executable, str(script), *args],
        env={**os.environ, **env},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )


def test_dash_v_is_the_version(tmp_path: Path) -> None:
    for out in (console(tmp_path, "-V"), run_cli("-V", cwd=tmp_path)):
        assert (out.returncode, out.stdout) == (0, f"openbot {__version__}\n"), out.stderr


def test_help_with_a_command_is_that_commands_help(tmp_path: Path) -> None:
    for words in ([], ["bots", "show"], ["run"]):
        asked = console(tmp_path, "help", *words)
        direct = console(tmp_path, *words, "--help")
        assert asked.returncode == direct.returncode == 0 and asked.stdout == direct.stdout, asked.stderr
    assert "help" in console(tmp_path, "--help").stdout  # listed among the commands
    wrong = console(tmp_path, "help", "nosuch")
    assert wrong.returncode == 2 and "nosuch" in wrong.stderr


def test_usage_lines_say_bot_not_braces(tmp_path: Path) -> None:
    out = run_cli("bots", "show", cwd=tmp_path)
    assert out.returncode == 2 and "bots show [OPTIONS] NAME\n" in out.stderr and "{" not in out.stderr
    page = console(tmp_path, "history", "--help").stdout
    assert "Usage: openbot history [OPTIONS] BOT " in page and "{BOT}" not in page, page


def test_bots_edit_opens_the_editor_and_checks_what_it_left(tmp_path: Path) -> None:
    make_bot("edited", [])
    config = paths.bot_home("edited") / "config.md"
    good = run_cli("bots", "edit", "edited", cwd=tmp_path, env={"VISUAL": "sed -i s/Work./Work_harder./"})
    assert good.returncode == 0 and "valid" in good.stdout, good.stderr
    assert "Work_harder." in config.read_text()
    bad = run_cli(
        "bots", "edit", "edited", cwd=tmp_path, env={"VISUAL": "", "EDITOR": "sed -i s/sleep_secs/sleep_sex/"}
    )
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) <= 2, bad.stderr
    assert str(config) in bad.stderr and "sleep_sex" in bad.stderr and "Traceback" not in bad.stderr
    failed = run_cli("bots", "edit", "edited", cwd=tmp_path, env={"VISUAL": "false"})
    assert failed.returncode == 2 and "exited with 1" in failed.stderr
    missing = run_cli("bots", "edit", "edited", cwd=tmp_path, env={"VISUAL": "/nonexistent/editor"})
    assert missing.returncode == 2 and "/nonexistent/editor" in missing.stderr


def test_the_shell_completes_bot_names(tmp_path: Path) -> None:
    make_bot("alpha", [])
    make_bot("alpine", [])
    make_bot("beta", [])
    for words in ("openbot run al", "openbot bots show al", "openbot history al", "openbot logs al"):
        out = console(
            tmp_path,
            _OPENBOT_COMPLETE="complete_bash",
            COMP_WORDS=words,
            COMP_CWORD=str(len(words.split()) - 1),
        )
        assert out.returncode == 0, out.stderr
        assert "alpha" in out.stdout and "alpine" in out.stdout and "beta" not in out.stdout, (
            words,
            out.stdout,
        )
