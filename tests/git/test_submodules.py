"""Submodules in run repositories, below the CLI: nested submodules, and a dead run's submodule work
recovered from its owner record (what the sweep does)."""

from __future__ import annotations

from pathlib import Path

from openbot.git.home import bring_home
from openbot.git.repo import find_repo
from openbot.git.runrepo import create_run_repo, remove_run_repo, reopen_run_repo
from openbot.git.runsdir import owners
from tests.helpers import git, make_repo

FILE_ALLOW = ("-c", "protocol.file.allow=always")


def nested(tmp_path: Path) -> Path:
    """repo ⊃ lib ⊃ inner, all initialised in the user's clone."""
    inner = make_repo(tmp_path / "inner", {"inner.txt": "inner v1\n"})
    lib = make_repo(tmp_path / "lib", {"lib.txt": "lib v1\n"})
    git(lib, *FILE_ALLOW, "submodule", "add", "-q", str(inner), "inner")
    git(lib, "commit", "-qm", "add inner")
    repo = make_repo(tmp_path / "repo")
    git(repo, *FILE_ALLOW, "submodule", "add", "-q", str(lib), "lib")
    git(repo, *FILE_ALLOW, "submodule", "update", "--init", "--recursive", "-q")
    git(repo, "commit", "-qm", "add lib")
    return repo


def module_git(repo: Path, *names: str) -> str:
    """`--git-dir=` of the user's module repository of `names` (nested: lib, inner)."""
    return f"--git-dir={repo / '.git' / ''.join(f'modules/{n}/' for n in names)}"


def test_nested_submodules_are_checked_out_and_their_work_comes_home(tmp_path: Path) -> None:
    repo = nested(tmp_path)
    found = find_repo(repo)
    assert found is not None
    rr = create_run_repo(found, "bot", "r1")
    assert [m.path for m in rr.modules] == ["lib", "lib/inner"] and not rr.notes
    assert (rr.path / "lib" / "inner" / "inner.txt").read_text() == "inner v1\n"
    (rr.path / "lib" / "inner" / "inner.txt").write_text("inner v2\n")  # left uncommitted, two levels down
    home = bring_home(rr, "wip")
    remove_run_repo(rr)
    lib = git(repo, "rev-parse", f"{home.tip}:lib")
    inner = git(repo, module_git(repo, "lib"), "rev-parse", f"{lib}:inner")
    inner_git = module_git(repo, "lib", "inner")
    assert git(repo, inner_git, "show", f"{inner}:inner.txt") == "inner v2"
    assert git(repo, inner_git, "rev-parse", f"refs/heads/{rr.branch}") == inner
    assert (repo / "lib" / "inner" / "inner.txt").read_text() == "inner v1\n"  # the user's checkout


def test_a_dead_runs_submodule_work_is_recovered_from_its_owner_record(tmp_path: Path) -> None:
    repo = nested(tmp_path)
    found = find_repo(repo)
    assert found is not None
    rr = create_run_repo(found, "bot", "r1")
    (rr.path / "lib" / "lib.txt").write_text("dirty\n")
    [(recorded, _)] = owners(rr.root)  # what the sweep reads: the modules come from the owner record
    assert recorded.modules == rr.modules
    home = bring_home(recorded, "recovered")
    remove_run_repo(rr)
    lib = git(repo, "rev-parse", f"{home.tip}:lib")
    assert git(repo, module_git(repo, "lib"), "show", f"{lib}:lib.txt") == "dirty"
    # A resume checks the branch out again, its submodule at the bot's commit from the user's module repo.
    again = reopen_run_repo(found, rr.branch, "bot", "r2")
    assert (again.path / "lib" / "lib.txt").read_text() == "dirty\n" and not again.notes
    remove_run_repo(again)
