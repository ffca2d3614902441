"""Shared fixtures: a temp OPENBOT_HOME, real git repos in tmp_path, and the CLI runner."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from openbot.cli.typer_app import get_app
from tests.helpers import make_repo


@pytest.fixture(autouse=True)
def openbot_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own OPENBOT_HOME and no API key from the developer's environment."""
    home = tmp_path / "openbot-home"
    monkeypatch.setenv("OPENBOT_HOME", str(home))
    # `--help` keeps typer's terminal renderings in the cache directory (cli/help_cache.py): not the user's.
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    monkeypatch.delenv("OPENBOT_DEBUG", raising=False)
    for name in ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"):
        monkeypatch.setenv(name, "Test")
    for name in ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"):
        monkeypatch.setenv(name, "test@example.com")
    return home


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo")


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A loopback TCP port nothing listens on, for as long as the test runs: bound (so no other test or
    xdist worker can take it) but not listening, so a connection is refused at once."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield int(sock.getsockname()[1])


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch) -> Callable[..., object]:
    """Invoke the CLI in-process: cli("bots", "list", cwd=path) → typer Result (stdout, stderr, exit_code)."""
    runner = CliRunner()

    def invoke(*args: str, cwd: Path | None = None, input: str | None = None):  # noqa: ANN202
        if cwd is not None:
            monkeypatch.chdir(cwd)
        return runner.invoke(get_app(), list(args), input=input)

    return invoke


# End-to-end tests (the real CLI in subprocesses, sandboxes, the shipped bots' dry runs, the workflow's
# steps) are `slow`; the rest — units and components in-process — are the quick subset a change can be
# checked with in under a minute: `python3 -m pytest -n 4 --dist worksteal -m "not slow"` (README).
SLOW_DIRS = ("run", "sandbox", "cli")
SLOW_FILES = (
    "test_shipped_runs.py",
    "test_demo_script.py",
    "test_workflow.py",
    "test_live_terminal.py",
    # The real CLI in subprocesses outside those directories (~90 `python -m openbot` between them).
    "test_corrupt_state.py",
    "test_escapes.py",
    "test_trust.py",
    "test_errors.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    root = Path(__file__).parent
    for item in items:
        where = item.path.relative_to(root)
        if where.parts[0] in SLOW_DIRS or where.name in SLOW_FILES:
            item.add_marker(pytest.mark.slow)
