"""What `openbot run` has imported when its first model request leaves, through the real entry point:
the modules start-up no longer pays for are named here (counted, not timed: docs/BENCHMARKS.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from openbot import paths
from openbot.testing.fakeapi import FakeAnthropic
from openbot.testing.fakeapi import reply as fake_reply

ROOT = Path(__file__).resolve().parents[2]
# The console script, and one hook: the modules loaded when the first Messages API request has been sent
# and the first event of its answer has come back (all that sending it needed is loaded by then).
WRAPPER = """\
import json, sys
out = sys.argv.pop(1)
from openbot.agent.models.anthropic import http
stream = http.Connection.stream
def first(self, *args, **kwargs):
    events = stream(self, *args, **kwargs)
    for event in events:
        if not http.__dict__.get("_seen"):
            http._seen = True
            with open(out, "w") as f:
                json.dump(sorted(sys.modules), f)
        yield event
http.Connection.stream = first
sys.argv[0] = "openbot"
from openbot.cli.app import main
sys.exit(main())
"""
# pydantic: typer coerces option values with it (cli/coercion.py answers the plain ones); frontmatter:
# the config's `+++` split is ours; yaml: the shipped skills' plain frontmatter (config/plain_yaml.py).
# tomlkit: the config is read by Python's tomllib first (config/frontmatter.parse_toml). openbot.git.home,
# .git.wip: what brings a branch home comes at the end (or with a sweep that finds a dead run);
# openbot.run.notify: after the run. pygit2: the plan's checks and the run repository's creation read the
# user's repository through git (git/userrepo.py); the WIP commit at the end still uses it. httpx2 (and
# what it brings): a plain request goes out on http.client (agent/models/direct.py).
NOT_BEFORE_THE_FIRST_REQUEST = (
    "httpx2",
    "httpcore2",
    "h11",
    "anyio",
    "pydantic",
    "pydantic_core",
    "typer._adapters",
    "frontmatter",
    "yaml",
    "tomlkit",
    "openbot.git.home",
    "openbot.git.wip",
    "openbot.run.notify",
    "pygit2",
)


def _first_request_modules(tmp_path: Path, repo: Path, args: list[str]) -> set[str]:
    bot = paths.bot_home("claude")
    bot.mkdir(parents=True, exist_ok=True)
    config = 'model = "claude-sonnet-5-5"\nmax_iterations = 1\nsleep_secs = 0'
    (bot / "config.md").write_text(f"+++\n{config}\n+++\n\nWork.\n")
    wrapper, out = tmp_path / "openbot-wrapper.py", tmp_path / "modules.json"
    wrapper.write_text(WRAPPER)
    done = fake_reply("", [{"name": "session_complete", "input": {"summary": "ok", "action": "discard"}}])
    with FakeAnthropic([done]) as api:
        env = {**os.environ, "ANTHROPIC_BASE_URL": api.base_url, "ANTHROPIC_API_KEY": "sk-ant-test-0000"}
        env["PYTHONPATH"] = str(ROOT)
        run = subprocess.run(
            [sys.executable, str(wrapper), str(out), *args],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )
    assert run.returncode == 0, run.stderr
    return set(json.loads(out.read_text()))


@pytest.mark.slow
def test_a_run_reaches_its_first_request_without_the_modules_start_up_dropped(
    tmp_path: Path, repo: Path
) -> None:
    loaded = _first_request_modules(tmp_path, repo, ["run", "claude", "--prompt", "go", "-n", "1"])
    assert {"http.client", "openbot.agent.turn", "openbot.run.runner"} <= loaded  # the request has left
    assert (
        sorted(
            m
            for m in loaded
            if m.split(".")[0] in NOT_BEFORE_THE_FIRST_REQUEST or m in NOT_BEFORE_THE_FIRST_REQUEST
        )
        == []
    )


def test_the_entry_point_module_imports_no_heavy_library() -> None:
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import openbot.cli.app"],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    loaded = {
        line.split("|")[-1].strip() for line in out.stderr.splitlines() if line.startswith("import time")
    }
    assert "openbot.cli.app" in loaded
    assert [m for m in ("typer", "rich", "pydantic", "httpx2", "pygit2", "tomlkit") if m in loaded] == []


def test_each_command_registers_alone_and_names_lists_them_all() -> None:
    # `openbot <command> …` registers only that command (cli/commands.py): NAMES must name every one.
    # That each alone prints the same help as in the full app: tests/cli/test_stored_help.py.
    code = (
        "import json, sys\n"
        "from openbot.cli.typer_app import build_command\n"
        "print(json.dumps(sorted(build_command(sys.argv[1]).commands)))\n"
    )

    def built(name: str) -> list[str]:
        out = subprocess.run(
            [sys.executable, "-c", code, name],
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert out.returncode == 0, out.stderr
        return list(json.loads(out.stdout))

    from openbot.cli.commands import NAMES

    assert built("") == sorted(NAMES) == built("no-such-command")
    for name in NAMES:
        assert name in built(name)
    assert built("run") == ["run"]


@pytest.mark.slow
def test_a_bare_run_reaches_its_first_request_without_typer(tmp_path: Path, repo: Path) -> None:
    # `openbot run <bot>` alone goes from the entry point to cli/run_flow.py (typer would only pass it on).
    loaded = _first_request_modules(tmp_path, repo, ["run", "claude"])
    assert {"http.client", "openbot.run.runner", "openbot.cli.run_flow"} <= loaded
    assert sorted(m for m in loaded if m.split(".")[0] in ("typer", "click", "rich")) == []
    assert "openbot.cli.typer_app" not in loaded


def test_the_bare_runs_options_are_the_typer_commands_defaults() -> None:
    import dataclasses
    import inspect

    from openbot.cli.run_cmd import run_command
    from openbot.cli.run_flow import RunArgs

    typer_defaults = {
        name: p.default.default for name, p in inspect.signature(run_command).parameters.items()
    }
    ours = {f.name: f.default for f in dataclasses.fields(RunArgs)}
    assert ours == typer_defaults


@pytest.mark.slow
@pytest.mark.parametrize("bot", ["no-such-bot", "bad/name"])
def test_a_bare_run_fails_as_the_typer_command_does(tmp_path: Path, repo: Path, bot: str) -> None:
    def run(*args: str) -> tuple[int, str, str]:
        wrapper = tmp_path / "openbot-entry.py"
        wrapper.write_text(
            'import sys\nsys.argv[0] = "openbot"\nfrom openbot.cli.app import main\nsys.exit(main())\n'
        )
        out = subprocess.run(
            [sys.executable, str(wrapper), *args],
            cwd=repo,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )
        return out.returncode, out.stdout, out.stderr

    direct, through_typer = run("run", bot), run("run", bot, "--prompt", "")  # "" is --prompt's default
    assert direct == through_typer
    assert direct[0] == 2 and direct[2].startswith("openbot: error:") and "Traceback" not in direct[2]
