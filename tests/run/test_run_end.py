"""The end of a run: its repository is moved aside at once and deleted by an `rm` of its own.

Counted, not timed: a logging `rm` first on PATH shows the deletion was handed over (once, and only the
run's own trash), the run's directories are gone from their places when openbot exits, the work is
home, and the trash disappears without openbot (waited for as an event, not a clock).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.helpers import complete, git, make_bot, reply, run_cli, shell, wait_for


@pytest.fixture
def logged_rm(tmp_path: Path) -> tuple[dict[str, str], Path]:
    real = shutil.which("rm")
    assert real is not None
    bin_dir, log = tmp_path / "bin", tmp_path / "rm.log"
    bin_dir.mkdir()
    shim = bin_dir / "rm"
    shim.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\nexec {real} "$@"\n')
    shim.chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}, log


def test_the_run_repository_is_deleted_by_a_process_of_its_own(
    repo: Path, logged_rm: tuple[dict[str, str], Path]
) -> None:
    env, log = logged_rm
    work = "echo hi > note.txt && git add note.txt && git commit -qm note"
    make_bot("tidy", [reply("", shell(work)), reply("", complete("noted", action="review"))])

    out = run_cli("run", "tidy", cwd=repo, env=env)

    assert out.returncode == 0, out.stderr
    runs = repo / ".git" / "openbot-worktrees"
    assert sorted(p.name for p in runs.iterdir() if not p.name.startswith(".")) == []  # moved aside
    branch = git(repo, "branch", "--list", "openbot/tidy-*", "--format=%(refname:short)")
    assert git(repo, "show", f"{branch}:note.txt") == "hi"  # the work is home
    wait_for(lambda: log.exists() and not list(runs.glob(".trash-*")))
    [line] = log.read_text().splitlines()  # one rm, for the run's own trash only
    args = line.split()
    assert args[:2] == ["-rf", "--"] and len(args) >= 4
    assert all(Path(a).parent == runs and Path(a).name.startswith(".trash-tidy-") for a in args[2:])
