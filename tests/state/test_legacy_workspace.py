"""Finding and adopting the Rust openbot's directory-name workspaces (openbot.state.legacy_workspace)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from openbot import paths
from openbot.errors import ConfigError
from openbot.state.legacy_workspace import adopt, find, rust_slug, view_slug
from openbot.state.project import resolve_project
from tests.helpers import make_repo, run_cli


def test_rust_slug_matches_the_rust_tool() -> None:
    # src/workspace.rs tests at montanaflynn/openbot cf3b7f2, and its trimming/collapsing rules
    assert rust_slug("my-project") == "my-project"
    assert rust_slug("MyApp") == "myapp"
    assert rust_slug("backend_api") == "backend-api"
    assert rust_slug("--a..b  c--") == "a-b-c"
    assert rust_slug("café") == "caf"
    assert rust_slug("___") == ""


def _legacy(bot: str, slug: str) -> Path:
    ws = paths.workspace_dir(bot, slug)
    ws.mkdir(parents=True)
    (ws / "memory.json").write_text('{"entries": {"k": "v"}}')
    return ws


def test_adopted_once_then_refused_for_a_same_named_repo(tmp_path: Path) -> None:
    ws = _legacy("b", "app")
    first = resolve_project(make_repo(tmp_path / "a" / "app"))
    assert view_slug("b", first) == ("app", view_slug("b", first)[1])
    note = adopt("b", first)
    assert note is not None and "moved" in note
    assert not ws.exists() and paths.memory_file("b", first.slug).is_file()
    assert adopt("b", first) is None  # its own state exists now: nothing to do
    second = resolve_project(make_repo(tmp_path / "b" / "app"))
    taken = adopt("b", second)
    assert taken is not None and first.identity in taken and first.slug in taken
    assert not paths.workspace_dir("b", second.slug).exists()
    assert view_slug("b", second)[0] == second.slug


def test_nothing_adopted_when_it_is_not_the_rust_tools(tmp_path: Path) -> None:
    project = resolve_project(make_repo(tmp_path / "app"))
    ws = _legacy("b", "app")
    (ws / "runs").mkdir()  # openbot's own (a `--project app` run): not legacy
    assert find("b", project) is None
    (ws / "runs").rmdir()
    paths.workspace_dir("b", project.slug).mkdir(parents=True)  # this repository has state already
    assert find("b", project) is None
    assert find("b", resolve_project(tmp_path / "app", "app")) is None  # --project names it exactly


def test_a_damaged_memory_is_refused_before_anything_moves(tmp_path: Path) -> None:
    ws = _legacy("b", "app")
    (ws / "memory.json").write_text("{")
    project = resolve_project(make_repo(tmp_path / "app"))
    with pytest.raises(ConfigError, match="memory.json is damaged"):
        adopt("b", project)
    assert ws.is_dir() and not paths.workspace_dir("b", project.slug).exists()


def test_a_damaged_marker_still_means_taken(tmp_path: Path) -> None:
    _legacy("b", "app")
    marker = paths.bot_home("b") / "workspaces" / "app.adopted.json"
    marker.write_text("{oops")
    project = resolve_project(make_repo(tmp_path / "app"))
    note = adopt("b", project)
    assert note is not None and "was adopted by another repository" in note and "move it by hand" in note
    assert (paths.bot_home("b") / "workspaces" / "app").is_dir()


def test_a_run_with_a_damaged_rust_memory_stops_with_one_line(tmp_path: Path, openbot_home: Path) -> None:
    bot = openbot_home / "bots" / "b"
    bot.mkdir(parents=True)
    (bot / "script.json").write_text(json.dumps({"responses": []}))
    (bot / "config.md").write_text('+++\nmodel = "scripted:script.json"\nsleep_secs = 0\n+++\nx\n')
    ws = _legacy("b", "app")
    (ws / "memory.json").write_text('{"entries": []}')
    repo = make_repo(tmp_path / "app")
    r = run_cli("run", "b", cwd=repo)
    assert r.returncode == 2 and str(ws / "memory.json") in r.stderr and "Traceback" not in r.stderr
    assert ws.is_dir() and not list((openbot_home / "bots" / "b" / "workspaces").glob("app-*"))
    assert not list(repo.joinpath(".git").glob("refs/heads/openbot/*"))


def test_old_memory_keys_are_kept_in_a_copy(tmp_path: Path) -> None:
    """A memory.json from before the Rust commit 5cf6d03 has a `history` list openbot's writes would drop."""
    from openbot.state.memory import MemoryStore

    ws = _legacy("b", "app")
    (ws / "memory.json").write_text('{"entries": {"k": "v"}, "history": [{"iteration": 1}]}')
    project = resolve_project(make_repo(tmp_path / "app"))
    note = adopt("b", project)
    assert note is not None and "also holds history" in note and "memory.json.rust-openbot" in note
    MemoryStore(paths.memory_file("b", project.slug)).set("k2", "v2")
    copy = paths.workspace_dir("b", project.slug) / "memory.json.rust-openbot"
    assert json.loads(copy.read_text())["history"] == [{"iteration": 1}]
