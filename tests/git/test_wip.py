"""The WIP commit: made in openbot's private git dir from the checkout's files, trusting nothing else."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from openbot.git.repo import RepoInfo, find_repo
from openbot.git.runrepo import create_run_repo
from tests.git.test_runrepo import finish, snapshot
from tests.helpers import git, make_repo


def info(path: Path) -> RepoInfo:
    found = find_repo(path)
    assert found is not None
    return found


def test_wip_author_is_the_configured_user_else_openbot(repo: Path, tmp_path: Path) -> None:
    git(repo, "config", "user.name", "Repo User")
    git(repo, "config", "user.email", "user@example.com")
    wt = create_run_repo(info(repo), "b", "r")
    (wt.path / "a.txt").write_text("a\n")
    sha = finish(wt, "openbot: WIP one").wip
    assert sha is not None
    assert git(repo, "log", "-1", "--format=%an <%ae>|%cn <%ce>", sha) == (
        "Repo User <user@example.com>|Repo User <user@example.com>"
    )

    git(repo, "config", "--unset", "user.name")
    git(repo, "config", "--unset", "user.email")
    # a fresh process with no global git config: libgit2 reads it once per process
    env = {**os.environ, "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1"}
    code = (
        "import sys; from pathlib import Path; from openbot.git.repo import find_repo; "
        "from openbot.git.runrepo import create_run_repo; from openbot.git.home import bring_home; "
        "wt = create_run_repo(find_repo(Path(sys.argv[1])), 'b', 'r2'); "
        "(wt.path / 'b.txt').write_text('b'); print(bring_home(wt, 'openbot: WIP two').wip)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(repo)], env=env, capture_output=True, text=True, check=True
    )
    assert git(repo, "log", "-1", "--format=%an <%ae>", out.stdout.strip()) == "openbot <openbot@localhost>"


def test_wip_stages_deletions_and_skips_a_nested_repository_and_special_files(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"keep.txt": "k\n", "drop.txt": "d\n", "staged-drop.txt": "s\n"})
    wt = create_run_repo(info(repo), "b", "r")
    (wt.path / "drop.txt").unlink()
    git(wt.path, "rm", "-q", "staged-drop.txt")
    clone = wt.path / "vendor" / "dep"
    clone.mkdir(parents=True)
    git(clone, "init", "-q")
    (clone / "x").write_text("x\n")
    (wt.path / "new.txt").write_text("n\n")
    os.mkfifo(wt.path / "pipe")  # reading it would block openbot forever

    sha = finish(wt).wip

    assert sha is not None
    assert git(repo, "ls-tree", "-r", "--name-only", sha).splitlines() == ["keep.txt", "new.txt"]


@pytest.mark.parametrize("tamper", ["points at the user's git dir", "deleted", "a new repository"])
def test_wip_never_follows_the_bots_dotgit(repo: Path, tamper: str) -> None:
    """The bot may rewrite its checkout's `.git`: the WIP lands on its branch, never in the user's index."""
    wt = create_run_repo(info(repo), "b", "r")
    before = snapshot(repo)
    (wt.path / "work.txt").write_text("the bot's work\n")
    (wt.path / ".git").unlink()
    if tamper == "points at the user's git dir":
        (wt.path / ".git").write_text(f"gitdir: {repo / '.git'}\n")
    elif tamper == "a new repository":
        git(wt.path, "init", "-q")

    sha = finish(wt).wip

    assert sha is not None and git(repo, "rev-parse", wt.branch) == sha
    assert git(repo, "show", f"{sha}:work.txt") == "the bot's work"
    assert git(repo, "ls-tree", "-r", "--name-only", sha).splitlines() == ["README.md", "work.txt"]
    assert snapshot(repo) == before and git(repo, "status", "--porcelain") == ""
    assert not wt.path.exists()


def test_a_run_repository_the_bot_broke_still_saves_its_files(repo: Path) -> None:
    """Commits whose objects the bot destroyed cannot come home; the files it left still do, as WIP."""
    wt = create_run_repo(info(repo), "b", "r")
    (wt.path / "a.txt").write_text("committed\n")
    git(wt.path, "add", "a.txt")
    git(wt.path, "commit", "-q", "-m", "bot commit")
    for d in (wt.git_dir / "objects").glob("??"):
        for f in d.iterdir():
            f.write_bytes(b"garbage")
    home = finish(wt)
    assert "could not be imported" in home.note and home.wip is not None
    assert git(repo, "rev-parse", f"{home.wip}^") == git(repo, "rev-parse", "main")
    assert git(repo, "show", f"{home.wip}:a.txt") == "committed"
    git(repo, "fsck", "--strict")
