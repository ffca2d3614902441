"""Project identity: from the repository (remote or common git dir), never the directory name alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from openbot.errors import UsageError
from openbot.state.project import normalize_remote, read_git_config, resolve_project
from tests.helpers import git, make_repo


def test_two_repos_with_the_same_name_get_different_slugs(tmp_path: Path) -> None:
    a = resolve_project(make_repo(tmp_path / "one" / "app"))
    b = resolve_project(make_repo(tmp_path / "two" / "app"))
    assert a.slug != b.slug
    assert a.slug.startswith("app-") and b.slug.startswith("app-")
    assert len(a.slug) == len("app-") + 8


def test_subdirectory_and_linked_worktree_map_to_the_same_project(tmp_path: Path) -> None:
    main = make_repo(tmp_path / "app", {"src/x.py": "x = 1\n"})
    git(main, "worktree", "add", "-q", "-b", "feature", str(tmp_path / "elsewhere" / "wt"))
    here = resolve_project(main)
    wt = resolve_project(tmp_path / "elsewhere" / "wt")
    assert wt.repo is not None and wt.repo.is_linked_worktree
    assert wt.slug == here.slug == resolve_project(main / "src").slug
    assert wt.identity == str(main / ".git")


@pytest.mark.parametrize(
    "url",
    [
        "git@github.com:Acme/app.git",
        "ssh://git@github.com/Acme/app",
        "https://github.com/Acme/app.git",
        "https://user:s3cret@GitHub.com/Acme/app/",
        "ssh://git@github.com:22/Acme/app.git",
    ],
)
def test_remote_spellings_of_one_repo_normalize_alike(url: str) -> None:
    assert normalize_remote(url) == "github.com/Acme/app"


def test_local_path_remotes_stay_paths() -> None:
    assert normalize_remote("/srv/git/app.git") == "file:/srv/git/app"
    assert normalize_remote("file:///srv/git/app.git/") == "file:/srv/git/app"


def test_clones_of_one_remote_in_different_paths_share_a_project(tmp_path: Path) -> None:
    slugs = set()
    for path in (tmp_path / "ci-run-1" / "app", tmp_path / "ci-run-2" / "checkout"):
        make_repo(path)
        git(path, "remote", "add", "origin", "git@example.com:team/app.git")
        slugs.add(resolve_project(path).slug)
    (slug,) = slugs
    assert slug.startswith("app-")
    other = make_repo(tmp_path / "fork" / "app")
    git(other, "remote", "add", "origin", "git@example.com:someone-else/app.git")
    assert resolve_project(other).slug != slug


def test_git_config_parser_handles_quotes_comments_and_old_syntax(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.write_text(
        "[core]\n\tbare = false\n"
        '[remote "upstream"]\n\turl = https://example.com/up.git\n'
        '[Remote "origin"] ; comment\n'
        "\t# url = https://example.com/commented.git\n"
        '\tURL = "https://example.com/a b.git" ; trailing comment\n'
        "\turl = https://example.com/second.git\n"
        "[remote.mirror]\n\turl = https://example.com/mirror.git\n"
    )
    assert read_git_config(config, "remote", "origin", "url") == "https://example.com/a b.git"
    assert read_git_config(config, "remote", "mirror", "url") == "https://example.com/mirror.git"
    assert read_git_config(config, "remote", "nope", "url") is None
    assert read_git_config(tmp_path / "missing", "remote", "origin", "url") is None


def test_outside_a_repo_the_directory_path_is_the_identity(tmp_path: Path) -> None:
    a, b = tmp_path / "x" / "notes", tmp_path / "y" / "notes"
    a.mkdir(parents=True)
    b.mkdir(parents=True)
    pa, pb = resolve_project(a), resolve_project(b)
    assert pa.repo is None and pa.slug.startswith("notes-") and pa.slug != pb.slug
    assert resolve_project(a).slug == pa.slug


def test_override_is_used_as_given_and_validated(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "app")
    p = resolve_project(repo, "my.project_1-x")
    assert p.slug == "my.project_1-x" and p.repo is not None
    for bad in ("../escape", "a/b", "..", ".", "", "sp ace", "x" * 101):
        with pytest.raises(UsageError, match="invalid project"):
            resolve_project(repo, bad)


def test_odd_directory_names_give_safe_slugs(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "my repo (copy)")
    assert resolve_project(repo).slug.startswith("my-repo-copy-")
    weird = make_repo(tmp_path / "...")
    assert resolve_project(weird).slug.startswith("project-")
