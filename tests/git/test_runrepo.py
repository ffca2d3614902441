"""The run repository on real repositories and processes: create, carry changes, bring home, sweep, reopen."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from openbot.errors import GitError, UsageError
from openbot.git.home import Homecoming, bring_home
from openbot.git.repo import RepoInfo, find_repo
from openbot.git.runrepo import create_run_repo, remove_run_repo, reopen_run_repo
from openbot.git.runsdir import RunRepo
from tests.helpers import git, make_repo


def info(path: Path) -> RepoInfo:
    found = find_repo(path)
    assert found is not None
    return found


def snapshot(checkout: Path) -> dict[str, object]:
    """Everything of the user's that openbot must leave alone."""
    git(checkout, "status")  # let git refresh its stat cache first, so the index bytes are stable
    git_dir = Path(git(checkout, "rev-parse", "--absolute-git-dir"))
    files = {
        str(p.relative_to(checkout)): p.read_bytes()
        for p in sorted(checkout.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(checkout).parts
    }
    return {
        "index": (git_dir / "index").read_bytes(),
        "status": git(checkout, "status", "--porcelain", "--untracked-files=all"),
        "head": git(checkout, "rev-parse", "HEAD"),
        "head_ref": (git_dir / "HEAD").read_text(),
        "branches": [
            ln
            for ln in git(
                checkout, "for-each-ref", "refs/heads", "--format=%(refname) %(objectname)"
            ).splitlines()
            if not ln.startswith("refs/heads/openbot/")  # the bot's own branch is the only one added
        ],
        "files": files,
    }


def make_dirty(repo: Path) -> None:
    (repo / "README.md").write_text("# edited, not staged\n")
    (repo / "staged.txt").write_text("staged new file\n")
    git(repo, "add", "staged.txt")
    (repo / "notes").mkdir()
    (repo / "notes" / "untracked.txt").write_text("untracked\n")
    (repo / ".gitignore").write_text("*.log\n")
    (repo / "debug.log").write_text("ignored\n")
    git(repo, "rm", "-q", "gone.txt")


def owner_file(wt: RunRepo) -> Path:
    """Kept beside the checkout, where the sandboxed bot cannot write (it can write its own repository)."""
    return wt.path.parent / f"{wt.name}.owner.json"


def worktree_paths(repo: Path) -> list[str]:
    out = git(repo, "worktree", "list", "--porcelain")
    return [ln.removeprefix("worktree ") for ln in out.splitlines() if ln.startswith("worktree ")]


def runs(repo: Path) -> list[str]:
    """What is in openbot-worktrees/ besides the lock."""
    root = repo / ".git" / "openbot-worktrees"
    return sorted(p.name for p in root.iterdir() if p.name != ".lock") if root.is_dir() else []


def finish(wt: RunRepo, message: str = "openbot: WIP") -> Homecoming:
    """What the runner does at the end: bring the branch home, then remove the run repository."""
    home = bring_home(wt, message)
    remove_run_repo(wt)
    return home


@pytest.fixture
def dirty_repo(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "repo", {"README.md": "# demo\n", "gone.txt": "bye\n", "src/a.py": "A = 1\n"})
    make_dirty(repo)
    return repo


def test_create_from_main_leaves_the_user_checkout_alone(dirty_repo: Path) -> None:
    before = snapshot(dirty_repo)
    wt = create_run_repo(info(dirty_repo), "fixer", "run-1")

    assert snapshot(dirty_repo) == before
    common = dirty_repo / ".git"
    assert wt.path == common / "openbot-worktrees" / wt.name
    assert wt.git_dir == common / "openbot-worktrees" / f"{wt.name}.git"
    assert wt.name.startswith("fixer-") and "/" not in wt.name
    assert wt.branch == f"openbot/{wt.name}"
    assert (wt.base_ref, wt.base_commit) == ("refs/heads/main", before["head"])
    assert git(wt.path, "rev-parse", "--abbrev-ref", "HEAD") == wt.branch
    assert git(wt.path, "status", "--porcelain") == ""  # the user's uncommitted work stays with the user
    assert (wt.path / "gone.txt").read_text() == "bye\n"
    assert worktree_paths(dirty_repo) == [str(dirty_repo)]  # not a linked worktree: a repository of its own
    assert git(wt.path, "rev-parse", "--absolute-git-dir") == str(wt.git_dir)
    assert (wt.git_dir / "objects/info/alternates").read_text() == f"{common / 'objects'}\n"
    assert not git(dirty_repo, "branch", "--list", "openbot/*")  # nothing in the user's repo until the end
    owner = json.loads(owner_file(wt).read_text())
    assert owner["pid"] == os.getpid() and owner["run_id"] == "run-1" and owner["bot"] == "fixer"
    assert (owner["branch"], owner["base_commit"]) == (wt.branch, wt.base_commit)
    assert owner["boot_id"] == Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    assert owner["pid_ns"] == os.readlink("/proc/self/ns/pid")
    assert {"host", "started_at", "pid_start"} <= owner.keys()


def test_create_from_a_subdirectory(repo: Path) -> None:
    (repo / "pkg" / "deep").mkdir(parents=True)
    wt = create_run_repo(info(repo / "pkg" / "deep"), "b", "r")
    assert wt.path.parent == repo / ".git" / "openbot-worktrees"
    assert (wt.path / "README.md").exists()


def test_create_from_inside_a_linked_worktree(repo: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(other))
    (other / "feature.txt").write_text("f\n")
    git(other, "add", "feature.txt")
    git(other, "commit", "-q", "-m", "feature work")
    before = snapshot(other)

    wt = create_run_repo(info(other / "."), "b", "r")

    assert snapshot(other) == before
    assert wt.path.parent == repo / ".git" / "openbot-worktrees"
    assert (wt.base_ref, wt.base_commit) == ("refs/heads/feature", git(other, "rev-parse", "HEAD"))
    assert (wt.path / "feature.txt").read_text() == "f\n"


def test_detached_head_has_no_base_ref(repo: Path) -> None:
    git(repo, "checkout", "-q", "--detach")
    wt = create_run_repo(info(repo), "b", "r")
    assert wt.base_ref == "" and wt.base_commit == git(repo, "rev-parse", "HEAD")


def test_names_are_unique_within_one_second(repo: Path) -> None:
    made = [create_run_repo(info(repo), "same", f"r{i}") for i in range(5)]
    assert len({wt.name for wt in made}) == 5
    assert len({wt.branch for wt in made}) == 5


def test_parallel_processes_all_get_a_worktree(repo: Path) -> None:
    code = (
        "import sys; from pathlib import Path; from openbot.git.repo import find_repo; "
        "from openbot.git.runrepo import create_run_repo; "
        "print(create_run_repo(find_repo(Path(sys.argv[1])), 'par', 'r').name)"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(repo)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for _ in range(4)
    ]
    results = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0, 0], [err for _, err in results]
    names = {out.decode().strip() for out, _ in results}
    assert len(names) == 4
    assert len([r for r in runs(repo) if r.endswith(".git")]) == 4


def test_empty_repository_is_a_usage_error(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q", "-b", "main")
    with pytest.raises(UsageError, match="first commit"):
        create_run_repo(info(empty), "b", "r")


def test_git_failure_is_a_git_error_and_leaves_nothing_behind(repo: Path) -> None:
    blob = git(repo, "rev-parse", "HEAD:README.md")
    os.remove(repo / ".git" / "objects" / blob[:2] / blob[2:])  # git cannot check the file out
    branches = git(repo, "branch", "--list")
    with pytest.raises(GitError) as e:
        create_run_repo(info(repo), "b", "r")
    assert "\n" not in e.value.one_line()
    assert git(repo, "branch", "--list") == branches
    assert runs(repo) == []


def test_with_changes_carries_uncommitted_work_and_leaves_the_user_alone(dirty_repo: Path) -> None:
    before = snapshot(dirty_repo)
    wt = create_run_repo(info(dirty_repo), "b", "r", with_changes=True)

    assert snapshot(dirty_repo) == before
    assert (wt.path / "README.md").read_text() == "# edited, not staged\n"
    assert (wt.path / "staged.txt").read_text() == "staged new file\n"
    assert (wt.path / "notes" / "untracked.txt").read_text() == "untracked\n"
    assert not (wt.path / "gone.txt").exists()
    assert not (wt.path / "debug.log").exists()  # ignored files stay behind
    status = {
        tuple(ln.split())
        for ln in git(wt.path, "status", "--porcelain", "--untracked-files=all").splitlines()
    }
    assert status == {
        ("M", "README.md"),
        ("D", "gone.txt"),
        ("??", ".gitignore"),
        ("??", "notes/untracked.txt"),
        ("??", "staged.txt"),
    }


def test_wip_commit_then_remove_keeps_the_branch(repo: Path) -> None:
    wt = create_run_repo(info(repo), "b", "r")
    assert bring_home(wt, "openbot: WIP nothing").wip is None
    (wt.path / "README.md").write_text("changed\n")
    (wt.path / "new" / "dir").mkdir(parents=True)
    (wt.path / "new" / "dir" / "file.txt").write_text("untracked\n")
    (wt.path / ".gitignore").write_text("build/\n")
    (wt.path / "build").mkdir()
    (wt.path / "build" / "out.bin").write_text("ignored\n")

    sha = finish(wt, "openbot: WIP run stopped").wip

    assert sha is not None and git(repo, "rev-parse", wt.branch) == sha
    assert git(repo, "log", "-1", "--format=%s", wt.branch) == "openbot: WIP run stopped"
    assert git(repo, "rev-parse", f"{wt.branch}^") == wt.base_commit
    tree = git(repo, "ls-tree", "-r", "--name-only", wt.branch).splitlines()
    assert sorted(tree) == [".gitignore", "README.md", "new/dir/file.txt"]
    assert runs(repo) == []
    remove_run_repo(wt)  # removing twice is harmless
    git(repo, "fsck", "--strict")


def test_remove_survives_a_half_deleted_directory(repo: Path) -> None:
    wt = create_run_repo(info(repo), "b", "r")
    (wt.path / ".git").unlink()
    (wt.path / "ro").mkdir()
    (wt.path / "ro" / "f").write_text("x")
    (wt.path / "ro").chmod(0o500)
    sha = finish(wt).wip
    assert sha is not None and git(repo, "show", f"{sha}:ro/f") == "x"  # the work survives a lost .git
    assert runs(repo) == []
    assert git(repo, "rev-parse", f"{wt.branch}^") == wt.base_commit


def test_reopen_branch_continues_on_the_same_branch(repo: Path) -> None:
    first = create_run_repo(info(repo), "b", "r1")
    (first.path / "step1.txt").write_text("one\n")
    sha1 = finish(first, "openbot: WIP step 1").wip

    again = reopen_run_repo(info(repo), first.branch, "b", "r2")
    assert again.branch == first.branch and again.name == first.name
    assert again.base_commit == first.base_commit and again.base_ref == "refs/heads/main"
    assert (again.path / "step1.txt").read_text() == "one\n"
    with pytest.raises(UsageError, match="already checked out"):
        reopen_run_repo(info(repo), first.branch, "b", "r3")
    (again.path / "step2.txt").write_text("two\n")
    sha2 = finish(again, "openbot: WIP step 2").wip

    assert git(repo, "rev-parse", f"{first.branch}^") == sha1
    assert git(repo, "rev-parse", first.branch) == sha2


def test_reopen_a_missing_branch_names_it(repo: Path) -> None:
    with pytest.raises(UsageError, match="openbot/nope"):
        reopen_run_repo(info(repo), "openbot/nope", "b", "r")


def test_ctrl_c_at_the_terminal_does_not_reach_git(repo: Path, tmp_path: Path) -> None:
    """A run that handles SIGINT itself gets its worktree: the git it started is not killed under it."""
    import shutil

    bin_dir, started = tmp_path / "bin", tmp_path / "git-started"
    bin_dir.mkdir()
    (bin_dir / "git").write_text(
        f'#!/bin/sh\ncase "$*" in *"read-tree"*) touch {started}; sleep 1;; esac\n'
        f'exec {shutil.which("git")} "$@"\n'
    )
    (bin_dir / "git").chmod(0o755)
    code = (
        "import signal, sys; from pathlib import Path; from openbot.git.repo import find_repo; "
        "from openbot.git.runrepo import create_run_repo; "
        "signal.signal(signal.SIGINT, lambda *_: print('stop requested', flush=True)); "
        "print(create_run_repo(find_repo(Path(sys.argv[1])), 'b', 'r').name)"
    )
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(repo)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as a terminal gives a foreground job
    )
    try:
        for _ in range(300):
            if started.exists() or proc.poll() is not None:
                break
            time.sleep(0.02)
        assert started.exists()
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C does: the whole foreground group
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert out.splitlines() == ["stop requested", "b-r"]
    assert (
        git(repo / ".git" / "openbot-worktrees" / "b-r", "rev-parse", "--abbrev-ref", "HEAD") == "openbot/b-r"
    )
