"""The CLI's own promises: --version, completion, fast start, one-line errors unless OPENBOT_DEBUG=1."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from openbot import __version__, paths
from openbot.testing.fakeapi import FakeAnthropic
from openbot.testing.fakeapi import reply as fake_reply
from tests.helpers import complete, make_bot, reply, run_cli

HEAVY = ("anthropic", "pygit2", "frontmatter", "tomlkit", "rich.live")


def test_version(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("--version")
    assert result.exit_code == 0 and result.stdout.strip() == f"openbot {__version__}"


def test_shell_completion_script() -> None:
    # As a user runs it: from a shell, which typer detects from the process's ancestry (the `; true` keeps
    # bash from exec-ing the command, so bash stays its parent whatever started the test run).
    code = f"{sys.executable} -m openbot --show-completion; true"
    result = subprocess.run(["bash", "-c", code], capture_output=True, text=True, timeout=60)
    assert "complete" in result.stdout and "openbot" in result.stdout, result.stdout + result.stderr


def _modules_after(args: list[str], cwd: Path) -> set[str]:
    code = (
        "import sys, json\n"
        "from openbot.cli.typer_app import get_app\n"
        f"try:\n    get_app()({args!r})\n"
        "except SystemExit:\n    pass\n"
        "print(json.dumps(sorted(sys.modules)), file=sys.stderr)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=60)
    return set(json.loads(out.stderr.strip().splitlines()[-1]))


def test_everyday_commands_do_not_import_heavy_libraries(repo: Path) -> None:
    make_bot("quick", [reply("", complete())])
    for args in (["--help"], ["memory", "quick", "show"], ["history", "quick"]):
        loaded = _modules_after(args, repo)
        assert not [m for m in HEAVY if m in loaded], args


def test_a_run_on_claude_never_imports_the_anthropic_sdk(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # openbot speaks the Messages API itself: the SDK's import alone cost more than Claude Code's whole
    # launch → first request (docs/BENCHMARKS.md). The run here makes real calls to the loopback server.
    bot = paths.bot_home("claude")
    bot.mkdir(parents=True)
    config = 'model = "claude-sonnet-5-5"\nmax_iterations = 1\nsleep_secs = 0'
    (bot / "config.md").write_text(f"+++\n{config}\n+++\n\nWork.\n")
    with FakeAnthropic([fake_reply("", [{"name": "session_complete", "input": {"summary": "ok"}}])]) as api:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0000")
        loaded = _modules_after(["run", "claude"], repo)
        assert len(api.requests) >= 1  # the run did talk to the API
    assert "http.client" in loaded and "anthropic" not in loaded


def test_errors_are_one_line_unless_debugging(tmp_path: Path) -> None:
    plain = run_cli("bots", "show", "nope", cwd=tmp_path)
    assert (
        plain.returncode == 2
        and len(plain.stderr.strip().splitlines()) == 1
        and "Traceback" not in plain.stderr
    )
    debug = run_cli("bots", "show", "nope", cwd=tmp_path, env={"OPENBOT_DEBUG": "1"})
    assert "Traceback" in debug.stderr and "NotFoundError" in debug.stderr


def test_a_filesystem_refusal_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    home_file = tmp_path / "not-a-dir"
    home_file.write_text("")
    out = run_cli("bots", "create", "q", cwd=tmp_path, env={"OPENBOT_HOME": str(home_file)})
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert out.stderr.count("\n") == 1 and "Not a directory" in out.stderr
