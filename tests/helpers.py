"""Helpers shared by the tests: real git repos, scripted bots, running the CLI and reading what it left."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from openbot import paths


def git(cwd: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Test",
        "GIT_AUTHOR_EMAIL": "test@example.com",
        "GIT_COMMITTER_NAME": "Test",
        "GIT_COMMITTER_EMAIL": "test@example.com",
    }
    out = subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True)
    return out.stdout.strip()


def make_repo(path: Path, files: dict[str, str] | None = None) -> Path:
    """A real git repository on branch main with one commit."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    for name, text in (files or {"README.md": "# demo\n"}).items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial")
    return path


def shell(command: str, id: str | None = None) -> dict[str, Any]:
    call: dict[str, Any] = {"name": "shell", "input": {"command": command}}
    if id:
        call["id"] = id
    return call


def complete(summary: str = "done", action: str = "review") -> dict[str, Any]:
    return {"name": "session_complete", "input": {"summary": summary, "action": action}}


def reply(text: str = "", *calls: dict[str, Any]) -> dict[str, Any]:
    return {"text": text, "tool_calls": list(calls)}


def make_bot(
    name: str, responses: list[dict[str, Any]], config: str = "", instructions: str = "Work."
) -> Path:
    """A bot under OPENBOT_HOME whose model replays `responses` (script next to its config.md)."""
    bot_dir = paths.bot_home(name)
    bot_dir.mkdir(parents=True, exist_ok=True)
    (bot_dir / "script.json").write_text(json.dumps({"responses": responses}))
    extra = config if "sleep_secs" in config else config + "\nsleep_secs = 0"
    (bot_dir / "config.md").write_text(
        f'+++\nmodel = "scripted:script.json"\n{extra}\n+++\n\n{instructions}\n'
    )
    return bot_dir


def run_cli(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "openbot", *args],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def sessions(bot: str) -> list[Path]:
    return sorted(paths.bot_home(bot).glob("workspaces/*/history/0*"))


def metadata(session_dir: Path) -> dict[str, Any]:
    return json.loads((session_dir / "metadata.json").read_text())


def events(session_dir: Path) -> list[dict[str, Any]]:
    # Split at "\n" only: a record may hold U+2028 and friends raw, where str.splitlines() would split.
    text = (session_dir / "events.jsonl").read_text()
    return [json.loads(line) for line in text.split("\n") if line]


def logged_program(program: str, bin_dir: Path, log: Path) -> dict[str, str]:
    """The environment's PATH with `program` first as a shim in `bin_dir` that appends each call's
    arguments, one line a call, to `log`, then runs the real one."""
    real = shutil.which(program)
    assert real is not None, f"{program} is not installed"
    bin_dir.mkdir(parents=True, exist_ok=True)
    shim = bin_dir / program
    shim.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\nexec {real} "$@"\n')
    shim.chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


def remove_tree(path: Path) -> None:
    """Remove a tree openbot ran in. openbot deletes a finished run's repository with a detached `rm`
    that may still be at work after openbot exited (docs/SANDBOX.md): entries vanishing under us are
    its doing, any other error is the test's."""

    def gone_meanwhile(func: Any, name: str, exc: BaseException) -> None:
        if not isinstance(exc, FileNotFoundError):
            raise exc

    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=gone_meanwhile)
    else:
        shutil.rmtree(path, onerror=lambda func, name, info: gone_meanwhile(func, name, info[1]))


def wait_for(predicate: Callable[[], bool], timeout: float = 30) -> None:
    """Poll until `predicate()` holds; fail the test after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("timed out waiting")


def start_run(*args: str, cwd: Path, **popen: Any) -> subprocess.Popen[str]:
    """`python -m openbot <args>` in the background (stdout and stderr piped unless given)."""
    options: dict[str, Any] = {
        "stdout": subprocess.PIPE,
        "stderr": subprocess.PIPE,
        "stdin": subprocess.DEVNULL,
    }
    return subprocess.Popen(
        [sys.executable, "-m", "openbot", *args], cwd=cwd, text=True, **{**options, **popen}
    )


def walk(root: Path, into_git: bool = False) -> list[Path]:
    """Every path under `root` (not inside `.git` directories unless `into_git`). os.walk, not rglob: a
    finished run's trash (in OPENBOT_HOME/trash) is deleted by a detached rm after openbot exits, and
    rglob raises when a directory vanishes under it; os.walk skips it."""
    found = []
    for top, dirs, files in os.walk(root):
        if not into_git:
            dirs[:] = [d for d in dirs if d != ".git"]
        found += [Path(top, name) for name in dirs + files]
    return found


def wrote(repo: Path, bot: str, name: str) -> bool:
    """The bot's command has written a whole line to `name` in its checkout (a run's head start, awaited
    rather than guessed at with a sleep: a loaded machine may take longer to get there)."""
    for path in (repo / ".git" / "openbot-worktrees").glob(f"{bot}-*/{name}"):
        try:
            if path.read_text().endswith("\n"):
                return True
        except OSError:
            continue
    return False


def tool_started(bot: str) -> bool:
    """The bot's latest session has logged a tool call (its command is running or has run)."""
    found = sessions(bot)
    log = found[-1] / "events.jsonl" if found else None
    return log is not None and log.exists() and '"tool_call"' in log.read_text()


def read_pty(main: int) -> bytes:
    """Everything a child wrote to its terminal, until every holder of the other end has closed it; closes
    `main`."""
    out = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # EIO: the child closed its end
            break
        if not chunk:
            break
        out += chunk
    os.close(main)
    return out
