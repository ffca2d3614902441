"""git/userrepo.py reads the user's repository through git as pygit2 read it: HEAD (attached, detached,
unborn), branches, and the configuration entries in libgit2's order, system file included."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pygit2
import pytest

from openbot.errors import GitError
from openbot.git import userrepo
from tests.helpers import git


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HOME of the test's with a global config, so global entries are in the comparison too."""
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text('[filter "Crypt"]\n\tclean = crypt-clean\n[core]\n\tautocrlf = input\n')
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    return home


def _pygit2_entries(path: Path) -> list[tuple[str, str | None]]:
    # In a process of its own: libgit2 finds the global config from HOME once, when it is first used.
    code = (
        "import json, sys, pygit2\n"
        "print(json.dumps([[e.name, e.value] for e in pygit2.Repository(sys.argv[1]).config]))"
    )
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return [(name, value) for name, value in json.loads(out.stdout)]


def test_the_configuration_is_what_libgit2_reads(repo: Path, home: Path) -> None:
    extra = repo / ".git" / "extra.config"
    extra.write_text("[lfs]\n\tstorage = ../elsewhere\n")
    with open(repo / ".git" / "config", "a") as f:
        f.write('[filter "Crypt"]\n\tclean = local-clean\n\trequired\n[include]\n\tpath = extra.config\n')
        f.write('[core]\n\thooksPath = .githooks\n[user]\n\tname = "A \\"quoted\\" name"\n')
    ours = userrepo.config(repo)
    assert ours == _pygit2_entries(repo)
    assert ours == userrepo.config(repo / ".git", git_dir=True)
    assert ("filter.Crypt.required", None) in ours and userrepo.get(
        ours, "filter.Crypt.clean"
    ) == "local-clean"
    assert userrepo.get(ours, "lfs.storage") == "../elsewhere" and userrepo.get(ours, "nope.key") is None


def test_head_and_branches_as_pygit2_saw_them(repo: Path, tmp_path: Path) -> None:
    user = pygit2.Repository(str(repo))
    head = userrepo.head(repo)
    assert head == userrepo.Head(str(user.head.target), user.head.name)
    assert userrepo.has_ref(repo, user.head.name) and not userrepo.has_ref(repo, "refs/heads/nope")
    assert not userrepo.has_ref(repo, "refs/heads/not a name")
    assert userrepo.any_branch(repo)
    git(repo, "checkout", "-q", "--detach")
    assert userrepo.head(repo) == userrepo.Head(head.commit, "")
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q", "-b", "trunk")
    assert pygit2.Repository(str(empty)).head_is_unborn
    assert userrepo.head(empty) == userrepo.Head("", "refs/heads/trunk")
    assert not userrepo.any_branch(empty)
    git(repo, "checkout", "-q", "--orphan", "fresh")
    assert userrepo.head(repo) == userrepo.Head("", "refs/heads/fresh") and userrepo.any_branch(repo)
    (repo / ".git" / "HEAD").write_text("not a ref\n")  # git refuses the repository: said, not "unborn"
    with pytest.raises(GitError):
        userrepo.head(repo)


def test_a_main_checkout_reads_the_same_config_as_its_git_dir(home: Path, tmp_path: Path) -> None:
    # git/runrepo.py reads the main checkout's configuration through its git dir (one read serves preflight
    # and the run repository): worktree config and conditional includes come out the same.
    repo = tmp_path / "r"
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    git(repo, "commit", "-q", "--allow-empty", "-m", "one")
    (tmp_path / "by-dir.cfg").write_text("[user]\n\tname = By Dir\n")
    (tmp_path / "by-branch.cfg").write_text("[user]\n\temail = b@x\n")
    git(repo, "config", f"includeIf.gitdir:{repo}/.git.path", str(tmp_path / "by-dir.cfg"))
    git(repo, "config", "includeIf.onbranch:main.path", str(tmp_path / "by-branch.cfg"))
    git(repo, "config", "extensions.worktreeConfig", "true")
    git(repo, "config", "--worktree", "lfs.storage", "elsewhere")
    entries = userrepo.config(repo)
    assert ("user.name", "By Dir") in entries and ("lfs.storage", "elsewhere") in entries
    assert ("user.email", "b@x") in entries
    assert userrepo.config(repo / ".git", git_dir=True) == entries
    # A linked worktree's own config.worktree is not its repository's: there both reads stay.
    git(repo, "worktree", "add", "-q", str(tmp_path / "linked"))
    git(tmp_path / "linked", "config", "--worktree", "lfs.storage", "linked-store")
    assert ("lfs.storage", "linked-store") in userrepo.config(tmp_path / "linked")
    assert ("lfs.storage", "linked-store") not in userrepo.config(repo / ".git", git_dir=True)


def test_kept_reads_answer_until_forgotten(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    git(repo, "commit", "-q", "--allow-empty", "-m", "one")
    userrepo.keep()
    try:
        first, entries = userrepo.head(repo), userrepo.config(repo)
        git(repo, "commit", "-q", "--allow-empty", "-m", "two")
        git(repo, "config", "openbot.test", "x")
        assert userrepo.head(repo) == first and userrepo.config(repo) == entries  # one read each
    finally:
        userrepo.forget()
    assert userrepo.head(repo).commit == git(repo, "rev-parse", "HEAD") != first.commit
    assert ("openbot.test", "x") in userrepo.config(repo)
