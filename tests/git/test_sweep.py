"""The sweep: runs that died left their repositories; their work is brought home, their directories go."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from openbot.git.runrepo import create_run_repo
from openbot.git.runsdir import RunRepo
from openbot.git.sweep import sweep_dead
from tests.git.test_runrepo import info, owner_file, runs, snapshot
from tests.helpers import git, make_repo


def spawn_owner(repo: Path, extra: str = "") -> tuple[subprocess.Popen[str], dict[str, str]]:
    """A separate process that creates a worktree, leaves work in it, reports it, then sleeps."""
    code = (
        "import json, sys, time; from pathlib import Path; from openbot.git.repo import find_repo; "
        "from openbot.git.runrepo import create_run_repo; "
        "wt = create_run_repo(find_repo(Path(sys.argv[1])), 'doomed', 'run-dead'); "
        "(wt.path / 'work.txt').write_text('unsaved\\n'); "
        "print(json.dumps({'name': wt.name, 'branch': wt.branch, 'path': str(wt.path)}), flush=True); "
        "time.sleep(60)"
    )
    proc = subprocess.Popen([sys.executable, "-c", code, str(repo)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    return proc, json.loads(proc.stdout.readline())


def test_sweep_recovers_a_run_killed_with_sigkill(repo: Path) -> None:
    proc, made = spawn_owner(repo)
    try:
        live = create_run_repo(info(repo), "alive", "run-live")  # owned by this (live) process
        assert sweep_dead(info(repo)) == []  # both owners still run
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate()
    Path(made["path"] + ".git", "index.lock").write_text("")  # as a killed `git add` leaves it
    swept = sweep_dead(info(repo))

    assert [(s.name, s.branch, s.run_id) for s in swept] == [(made["name"], made["branch"], "run-dead")]
    sha = swept[0].wip_sha
    assert sha is not None and git(repo, "rev-parse", made["branch"]) == sha
    assert git(repo, "log", "-1", "--format=%s", sha) == "openbot: WIP recovered from dead run run-dead"
    assert git(repo, "show", f"{sha}:work.txt") == "unsaved"
    assert (
        str(swept[0])
        == f"recovered the work of a dead run: {made['name']} of doomed run run-dead: work saved as "
        f"{sha[:12]} on branch {made['branch']}"
    )
    assert not Path(made["path"]).exists()
    assert runs(repo) == sorted([live.name, f"{live.name}.git", f"{live.name}.owner.json"])
    assert live.path.exists()


def test_sweep_treats_a_recycled_pid_as_dead_and_ignores_other_hosts(repo: Path) -> None:
    recycled = create_run_repo(info(repo), "b", "r1")
    foreign = create_run_repo(info(repo), "b", "r2")
    edit_owner(recycled, pid_start=1)
    edit_owner(foreign, host="elsewhere", pid=1)

    assert [s.name for s in sweep_dead(info(repo))] == [recycled.name]
    assert foreign.path.exists() and not recycled.path.exists()


def edit_owner(wt: RunRepo, **changes: object) -> None:
    path = owner_file(wt)
    path.write_text(json.dumps({k: v for k, v in {**json.loads(path.read_text()), **changes}.items() if v}))


def test_sweep_forgets_a_run_whose_directories_are_gone(repo: Path) -> None:
    import shutil

    wt = create_run_repo(info(repo), "b", "r")
    shutil.rmtree(wt.path)
    shutil.rmtree(wt.git_dir)
    assert sweep_dead(info(repo)) == []
    assert runs(repo) == []


def test_sweep_goes_by_openbots_record_not_the_dead_bots_repository(repo: Path, tmp_path: Path) -> None:
    """The bot can rewrite everything in its own repository; the sweep trusts none of it."""
    proc, made = spawn_owner(repo)
    live = create_run_repo(info(repo), "alive", "run-live")
    git_dir = Path(made["path"] + ".git")
    decoy, outside = make_repo(tmp_path / "decoy"), tmp_path / "bashrc"
    outside.write_text("# the user's shell config\n")
    (git_dir / "HEAD").write_text("ref: refs/heads/main\n")
    (git_dir / "objects" / "info" / "alternates").write_text(f"{decoy / '.git' / 'objects'}\n")
    (Path(made["path"]) / ".git").write_text(f"gitdir: {live.git_dir}\n")
    (git_dir / "index").unlink()
    (git_dir / "index").symlink_to(repo / ".git" / "index")
    (git_dir / "logs").mkdir(exist_ok=True)
    (git_dir / "logs" / "HEAD").symlink_to(outside)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate()
    before = snapshot(repo)

    swept = sweep_dead(info(repo))

    assert [(s.name, s.branch, s.bot, s.run_id) for s in swept] == [
        (made["name"], made["branch"], "doomed", "run-dead")
    ]
    assert snapshot(repo) == before and outside.read_text() == "# the user's shell config\n"
    assert git(repo, "show", f"{made['branch']}:work.txt") == "unsaved"
    assert git(repo, "rev-parse", f"{made['branch']}^") == git(repo, "rev-parse", "main")
    assert live.path.is_dir() and git(live.path, "status", "--porcelain") == ""
    git(repo, "fsck", "--strict")


def test_sweep_leaves_the_users_worktree_whose_directory_is_missing(repo: Path, tmp_path: Path) -> None:
    mine = tmp_path / "on-a-usb-disk"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(mine))
    mine.rename(tmp_path / "unmounted")
    dead = create_run_repo(info(repo), "b", "r")
    edit_owner(dead, pid_start=1)

    assert [s.name for s in sweep_dead(info(repo))] == [dead.name]
    assert (repo / ".git" / "worktrees" / mine.name).is_dir()
    (tmp_path / "unmounted").rename(mine)
    assert git(mine, "rev-parse", "--abbrev-ref", "HEAD") == "feature"


@pytest.mark.parametrize(
    ("owner", "swept"),
    [
        ({"pid_ns": "pid:[1]", "pid": 2**22 + 1}, False),  # another container: its pid means nothing here
        ({"boot_id": "an-earlier-boot"}, True),  # this machine rebooted: the run is certainly gone
        ({"boot_id": None, "pid_ns": None}, False),  # an older record: host and a live pid keep it
        ({"boot_id": None, "pid_ns": None, "pid_start": 1}, True),  # … and a recycled pid does not
    ],
)
def test_sweep_tells_containers_and_reboots_apart(repo: Path, owner: dict[str, object], swept: bool) -> None:
    wt = create_run_repo(info(repo), "b", "r")
    (wt.path / "work.txt").write_text("w\n")
    edit_owner(wt, **owner)

    assert [s.name for s in sweep_dead(info(repo))] == ([wt.name] if swept else [])
    assert wt.path.exists() is not swept
