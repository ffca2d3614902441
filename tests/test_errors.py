"""The one map from endings to exit codes, and the one reading of OPENBOT_DEBUG."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from openbot.errors import ConfigError, GitError, exit_code_of
from openbot.stops import Completed, Completion, Interrupted, LimitReached
from tests.helpers import run_cli


@pytest.mark.parametrize(
    ("ended", "code"),
    [
        (None, 0),
        (Completed(Completion("done", "review")), 0),
        (LimitReached("max_tokens", "token limit reached"), 3),
        (Interrupted(signal.SIGTERM), 143),
        (ConfigError("bad key"), 2),
        (GitError("git failed"), 1),
        (OSError("disk full"), 1),
        (RuntimeError("a bug"), 1),
    ],
)
def test_every_ending_has_one_exit_code(ended: BaseException | None, code: int) -> None:
    assert exit_code_of(ended) == code


@pytest.mark.parametrize(
    ("value", "traceback"),
    [("0", False), ("false", False), ("No", False), ("", False), ("1", True), ("true", True), ("YES", True)],
)
def test_openbot_debug_means_the_same_everywhere(tmp_path: Path, value: str, traceback: bool) -> None:
    # Bug fixed: "false" and "no" turned tracebacks on in the CLI, and "0" turned them on in the runner.
    out = run_cli("bots", "show", "nope", cwd=tmp_path, env={"OPENBOT_DEBUG": value})
    assert out.returncode != 0 and ("Traceback" in out.stderr) == traceback, out.stderr
    if not traceback:
        assert out.returncode == 2 and out.stderr.startswith("openbot: error: ")
