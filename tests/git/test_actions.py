"""What happens to a bot's branch after the run: review, merge (fast-forward only, when safe), discard."""

from __future__ import annotations

from pathlib import Path

import pytest

from openbot.errors import UsageError
from openbot.git.actions import apply_action
from openbot.git.home import Homecoming
from openbot.git.repo import RepoInfo, find_repo
from openbot.git.runrepo import create_run_repo
from openbot.git.runsdir import RunRepo
from tests.git.test_runrepo import finish, snapshot
from tests.helpers import git


def info(path: Path) -> RepoInfo:
    found = find_repo(path)
    assert found is not None
    return found


def finished_run(repo: Path, files: dict[str, str] | None = None) -> tuple[RunRepo, Homecoming]:
    """A run whose bot left `files`, brought home and removed, as the runner leaves it."""
    wt = create_run_repo(info(repo), "b", "r")
    for name, text in (files if files is not None else {"bot.txt": "from the bot\n"}).items():
        (wt.path / name).write_text(text)
    home = finish(wt, "openbot: WIP bot work")
    assert (home.wip is not None) == (files != {})
    return wt, home


def test_review_leaves_the_branch_and_says_how_to_look(repo: Path) -> None:
    wt, home = finished_run(repo)
    before = snapshot(repo)
    out = apply_action(info(repo), wt, "review", home)
    assert out.applied
    assert f"git log -p main..{wt.branch}" in out.message
    assert f"git merge --no-overwrite-ignore {wt.branch}" in out.message
    assert snapshot(repo) == before and git(repo, "rev-parse", "--verify", wt.branch)


def test_no_new_commits_is_said(repo: Path) -> None:
    wt, home = finished_run(repo, {})
    for action in ("review", "merge"):
        out = apply_action(info(repo), wt, action, home)
        assert not out.applied and "no new commits" in out.message
    assert "no new commits" in apply_action(info(repo), wt, "discard", home).message


def test_merge_updates_a_base_branch_that_is_not_checked_out(repo: Path) -> None:
    wt, home = finished_run(repo)
    git(repo, "checkout", "-q", "-b", "elsewhere")
    before = snapshot(repo)

    out = apply_action(info(repo), wt, "merge", home)

    assert out.applied, out.message
    assert git(repo, "rev-parse", "main") == git(repo, "rev-parse", wt.branch)
    assert "openbot" in git(repo, "reflog", "-1", "--format=%gs", "main")
    after = snapshot(repo)
    assert after.pop("branches") != before.pop("branches")  # main moved …
    assert after == before  # … and the checkout on `elsewhere` is untouched


def test_merge_fast_forwards_the_users_clean_checkout(repo: Path) -> None:
    wt, home = finished_run(repo, {"bot.txt": "from the bot\n", "README.md": "# improved\n"})
    (repo / "scratch.txt").write_text("untracked, unrelated\n")

    out = apply_action(info(repo), wt, "merge", home)

    assert out.applied, out.message
    assert git(repo, "rev-parse", "HEAD") == git(repo, "rev-parse", wt.branch)
    assert (repo / "bot.txt").read_text() == "from the bot\n"
    assert (repo / "README.md").read_text() == "# improved\n"
    assert git(repo, "status", "--porcelain") == "?? scratch.txt"


@pytest.mark.parametrize("mess", ["tracked edit", "untracked file in the way", "diverged", "detached"])
def test_merge_refuses_and_touches_nothing(repo: Path, mess: str) -> None:
    wt, home = finished_run(repo)
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

    out = apply_action(info(repo), wt, "merge", home)

    assert not out.applied and "not merged" in out.message
    assert f"git merge --no-overwrite-ignore {wt.branch}" in out.message
    assert snapshot(repo) == before and git(repo, "rev-parse", wt.branch) == tip


def test_merge_refuses_when_the_base_is_checked_out_in_another_worktree(repo: Path, tmp_path: Path) -> None:
    wt, home = finished_run(repo)
    git(repo, "checkout", "-q", "-b", "elsewhere")
    git(repo, "worktree", "add", "-q", str(tmp_path / "other"), "main")
    main_before = git(repo, "rev-parse", "main")

    out = apply_action(info(repo), wt, "merge", home)

    assert not out.applied and "another worktree" in out.message
    assert git(repo, "rev-parse", "main") == main_before


def test_discard_deletes_the_branch_and_says_how_to_restore_it(repo: Path) -> None:
    wt, home = finished_run(repo)
    tip = git(repo, "rev-parse", wt.branch)
    out = apply_action(info(repo), wt, "discard", home)
    assert out.applied and f"git branch {wt.branch} {tip}" in out.message
    assert wt.branch not in git(repo, "branch", "--list")
    git(repo, "branch", wt.branch, tip)  # the printed command really restores it
    assert git(repo, "rev-parse", wt.branch) == tip


def test_unknown_action_is_a_usage_error(repo: Path) -> None:
    wt, home = finished_run(repo)
    with pytest.raises(UsageError, match="explode"):
        apply_action(info(repo), wt, "explode", home)


def test_merge_refuses_to_overwrite_an_ignored_file_of_the_users(repo: Path) -> None:
    (repo / ".gitignore").write_text("*.local\n")
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-q", "-m", "ignore")
    (repo / "dev.local").write_text("the user's secrets\n")
    wt, home = finished_run(repo, {".gitignore": "", "dev.local": "the bot's\n"})
    before = snapshot(repo)

    out = apply_action(info(repo), wt, "merge", home)

    assert not out.applied and "\n" not in out.message
    assert "would overwrite dev.local" in out.message and "does not track" in out.message
    assert snapshot(repo) == before and (repo / "dev.local").read_text() == "the user's secrets\n"


def test_actions_go_by_the_imported_tip_whatever_the_branch_says_now(repo: Path) -> None:
    wt, home = finished_run(repo)
    git(repo, "checkout", "-q", "-b", "attack")
    (repo / "evil.txt").write_text("evil\n")
    git(repo, "add", "evil.txt")
    git(repo, "commit", "-q", "-m", "evil")
    evil = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "main")
    git(repo, "update-ref", f"refs/heads/{home.branch}", evil)  # someone moved the bot's branch

    out = apply_action(info(repo), wt, "merge", home)

    assert out.applied and git(repo, "rev-parse", "main") == home.tip != evil
    assert not (repo / "evil.txt").exists()
    kept = apply_action(info(repo), wt, "discard", home)
    assert not kept.applied and git(repo, "rev-parse", home.branch) == evil  # not openbot's to delete
