"""What happens to a bot's branch after the run: review, merge (fast-forward only, when safe), discard."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from openbot.errors import GitError, UsageError
from openbot.git.gitops import commit_wip
from openbot.git.repo import RepoInfo, find_repo
from openbot.git.worktree import Worktree, apply_action, create_worktree, remove_worktree
from tests.git.test_worktree import snapshot, worktree_paths
from tests.helpers import git, make_repo


def info(path: Path) -> RepoInfo:
    found = find_repo(path)
    assert found is not None
    return found


def finished_run(repo: Path, files: dict[str, str] | None = None) -> Worktree:
    """A worktree whose bot committed `files` and which has then been removed, as the runner leaves it."""
    wt = create_worktree(info(repo), "b", "r")
    for name, text in (files if files is not None else {"bot.txt": "from the bot\n"}).items():
        (wt.path / name).write_text(text)
    if files != {}:
        assert remove_worktree(wt, "openbot: WIP bot work") is not None
    else:
        remove_worktree(wt, "openbot: WIP")
    return wt


def test_review_leaves_the_branch_and_says_how_to_look(repo: Path) -> None:
    wt = finished_run(repo)
    before = snapshot(repo)
    out = apply_action(info(repo), wt, "review")
    assert out.applied
    assert f"git log -p main..{wt.branch}" in out.message and f"git merge {wt.branch}" in out.message
    assert snapshot(repo) == before and git(repo, "rev-parse", "--verify", wt.branch)


def test_no_new_commits_is_said(repo: Path) -> None:
    wt = finished_run(repo, {})
    for action in ("review", "merge"):
        out = apply_action(info(repo), wt, action)
        assert not out.applied and "no new commits" in out.message
    assert "no new commits" in apply_action(info(repo), wt, "discard").message


def test_merge_updates_a_base_branch_that_is_not_checked_out(repo: Path) -> None:
    wt = finished_run(repo)
    git(repo, "checkout", "-q", "-b", "elsewhere")
    before = snapshot(repo)

    out = apply_action(info(repo), wt, "merge")

    assert out.applied, out.message
    assert git(repo, "rev-parse", "main") == git(repo, "rev-parse", wt.branch)
    assert "openbot" in git(repo, "reflog", "-1", "--format=%gs", "main")
    after = snapshot(repo)
    assert after.pop("branches") != before.pop("branches")  # main moved …
    assert after == before  # … and the checkout on `elsewhere` is untouched


def test_merge_fast_forwards_the_users_clean_checkout(repo: Path) -> None:
    wt = finished_run(repo, {"bot.txt": "from the bot\n", "README.md": "# improved\n"})
    (repo / "scratch.txt").write_text("untracked, unrelated\n")

    out = apply_action(info(repo), wt, "merge")

    assert out.applied, out.message
    assert git(repo, "rev-parse", "HEAD") == git(repo, "rev-parse", wt.branch)
    assert (repo / "bot.txt").read_text() == "from the bot\n"
    assert (repo / "README.md").read_text() == "# improved\n"
    assert git(repo, "status", "--porcelain") == "?? scratch.txt"


@pytest.mark.parametrize("mess", ["tracked edit", "untracked file in the way", "diverged", "detached"])
def test_merge_refuses_and_touches_nothing(repo: Path, mess: str) -> None:
    wt = finished_run(repo)
    if mess == "tracked edit":
        (repo / "README.md").write_text("user's edit\n")
    elif mess == "untracked file in the way":
        (repo / "bot.txt").write_text("the user's own file\n")
    elif mess == "diverged":
        (repo / "user.txt").write_text("u\n")
        git(repo, "add", "user.txt")
        git(repo, "commit", "-q", "-m", "user moved on")
    else:
        wt.base_ref = ""
    before = snapshot(repo)
    tip = git(repo, "rev-parse", wt.branch)

    out = apply_action(info(repo), wt, "merge")

    assert not out.applied and "not merged" in out.message and f"git merge {wt.branch}" in out.message
    assert snapshot(repo) == before and git(repo, "rev-parse", wt.branch) == tip


def test_merge_refuses_when_the_base_is_checked_out_in_another_worktree(repo: Path, tmp_path: Path) -> None:
    wt = finished_run(repo)
    git(repo, "checkout", "-q", "-b", "elsewhere")
    git(repo, "worktree", "add", "-q", str(tmp_path / "other"), "main")
    main_before = git(repo, "rev-parse", "main")

    out = apply_action(info(repo), wt, "merge")

    assert not out.applied and "another worktree" in out.message
    assert git(repo, "rev-parse", "main") == main_before


def test_discard_deletes_the_branch_and_says_how_to_restore_it(repo: Path) -> None:
    wt = finished_run(repo)
    tip = git(repo, "rev-parse", wt.branch)
    out = apply_action(info(repo), wt, "discard")
    assert out.applied and f"git branch {wt.branch} {tip}" in out.message
    assert wt.branch not in git(repo, "branch", "--list")
    git(repo, "branch", wt.branch, tip)  # the printed command really restores it
    assert git(repo, "rev-parse", wt.branch) == tip


def test_unknown_action_is_a_usage_error(repo: Path) -> None:
    with pytest.raises(UsageError, match="explode"):
        apply_action(info(repo), finished_run(repo), "explode")


def test_wip_author_is_the_configured_user_else_openbot(repo: Path, tmp_path: Path) -> None:
    wt = create_worktree(info(repo), "b", "r")
    git(repo, "config", "user.name", "Repo User")
    git(repo, "config", "user.email", "user@example.com")
    (wt.path / "a.txt").write_text("a\n")
    sha = commit_wip(wt, "openbot: WIP one")
    assert git(repo, "log", "-1", "--format=%an <%ae>|%cn <%ce>", sha) == (
        "Repo User <user@example.com>|Repo User <user@example.com>"
    )

    git(repo, "config", "--unset", "user.name")
    git(repo, "config", "--unset", "user.email")
    (wt.path / "b.txt").write_text("b\n")
    # a fresh process with no global git config: libgit2 reads it once per process
    env = {**os.environ, "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1"}
    code = (
        "import sys; from pathlib import Path; from openbot.git.worktree import Worktree, commit_wip; "
        "p, admin, common = map(Path, sys.argv[2:]); "
        "print(commit_wip(Worktree(p.name, p, sys.argv[1], '', '', admin, common), 'openbot: WIP two'))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, wt.branch, str(wt.path), str(wt.admin_dir), str(wt.common_dir)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert git(repo, "log", "-1", "--format=%an <%ae>", out.stdout.strip()) == "openbot <openbot@localhost>"


def test_wip_stages_deletions_and_skips_a_nested_repository(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"keep.txt": "k\n", "drop.txt": "d\n", "staged-drop.txt": "s\n"})
    wt = create_worktree(info(repo), "b", "r")
    (wt.path / "drop.txt").unlink()
    git(wt.path, "rm", "-q", "staged-drop.txt")
    clone = wt.path / "vendor" / "dep"
    clone.mkdir(parents=True)
    git(clone, "init", "-q")
    (clone / "x").write_text("x\n")
    (wt.path / "new.txt").write_text("n\n")

    sha = commit_wip(wt, "openbot: WIP")

    assert sha is not None
    assert git(repo, "ls-tree", "-r", "--name-only", sha).splitlines() == ["keep.txt", "new.txt"]
    assert git(wt.path, "status", "--porcelain") == "?? vendor/"


@pytest.mark.parametrize("tamper", ["points at the user's git dir", "deleted", "a new repository"])
def test_wip_never_follows_the_bots_dotgit(repo: Path, tamper: str) -> None:
    """The bot may rewrite its worktree's `.git`: the WIP lands on its branch, never in the user's index."""
    wt = create_worktree(info(repo), "b", "r")
    before = snapshot(repo)
    (wt.path / "work.txt").write_text("the bot's work\n")
    (wt.path / ".git").unlink()
    if tamper == "points at the user's git dir":
        (wt.path / ".git").write_text(f"gitdir: {repo / '.git'}\n")
    elif tamper == "a new repository":
        git(wt.path, "init", "-q")

    sha = remove_worktree(wt, "openbot: WIP")

    assert sha is not None and git(repo, "rev-parse", wt.branch) == sha
    assert git(repo, "show", f"{sha}:work.txt") == "the bot's work"
    assert git(repo, "ls-tree", "-r", "--name-only", sha).splitlines() == ["README.md", "work.txt"]
    assert snapshot(repo) == before and git(repo, "status", "--porcelain") == ""
    assert not wt.path.exists()


def test_wip_ignores_what_the_bot_wrote_into_its_admin_dir(repo: Path, tmp_path: Path) -> None:
    """HEAD, commondir, gitdir and index of the admin dir are the bot's to write (its sandbox allows it)."""
    wt = create_worktree(info(repo), "b", "r")
    decoy = make_repo(tmp_path / "decoy")
    (wt.path / "work.txt").write_text("the bot's work\n")
    main = git(repo, "rev-parse", "main")
    before = snapshot(repo)
    (wt.admin_dir / "HEAD").write_text("ref: refs/heads/main\n")
    (wt.admin_dir / "commondir").write_text(f"{decoy / '.git'}\n")
    (wt.admin_dir / "gitdir").write_text(f"{repo / '.git'}\n")
    (wt.admin_dir / "index").unlink()
    (wt.admin_dir / "index").symlink_to(repo / ".git" / "index")

    sha = commit_wip(wt, "openbot: WIP")

    assert sha is not None and git(repo, "rev-parse", wt.branch) == sha
    assert git(repo, "rev-parse", f"{sha}^") == main and git(repo, "rev-parse", "main") == main
    assert git(repo, "show", f"{sha}:work.txt") == "the bot's work"
    assert snapshot(repo) == before
    assert git(decoy, "rev-list", "--all").count("\n") == 0  # the decoy still has its single commit
    assert git(wt.path, "status", "--porcelain") == ""  # and the kept worktree leads git to the right place
    remove_worktree(wt, "openbot: WIP")
    assert snapshot(repo) == before and worktree_paths(repo) == [str(repo)]


def test_a_wip_that_cannot_be_made_keeps_the_directory(repo: Path) -> None:
    wt = create_worktree(info(repo), "b", "r")
    (wt.path / "work.txt").write_text("the bot's work\n")
    git(repo, "update-ref", "-d", f"refs/heads/{wt.branch}")
    wt.base_commit = ""  # neither the branch nor a base to commit onto

    with pytest.raises(GitError, match="could not commit"):
        remove_worktree(wt, "openbot: WIP")
    assert (wt.path / "work.txt").read_text() == "the bot's work\n"
