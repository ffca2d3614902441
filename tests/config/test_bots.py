"""Creating, copying, listing and deleting bots on a temp OPENBOT_HOME and real git repos."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from openbot import paths
from openbot.agent.models.scripted import ScriptedModel
from openbot.config import bots
from openbot.config.botconfig import load_bot_file
from openbot.errors import NotFoundError, UsageError

EXAMPLE_CONFIG = """\
+++
# Replays a script: no API key needed.
description = "Demo example"
model = "scripted:script.json"
max_iterations = 1
+++

Say hello.
"""


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def examples(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A shipped-examples dir with one scripted example carrying extra files."""
    root = tmp_path / "shipped-bots"
    demo = root / "demo"
    (demo / "notes").mkdir(parents=True)
    (demo / "config.md").write_text(EXAMPLE_CONFIG)
    (demo / "script.json").write_text('{"responses": [{"text": "hi"}]}')
    (demo / "notes" / "readme.txt").write_text("extra file")
    (root / "not-a-bot").mkdir()  # no config.md: not an example
    monkeypatch.setattr(paths, "SHIPPED_BOTS", root)
    return root


def test_create_writes_private_config(openbot_home: Path) -> None:
    path = bots.create_bot("fixer", description="Fixes things", prompt="Fix the tests.")
    assert path == openbot_home / "bots" / "fixer" / "config.md"
    bf = load_bot_file(path)
    assert bf.config.description == "Fixes things" and bf.instructions == "Fix the tests."
    assert mode(path) == 0o600
    assert mode(path.parent) == 0o700 and mode(openbot_home / "bots") == 0o700


def test_create_without_prompt_gets_placeholder_instructions() -> None:
    bf = load_bot_file(bots.create_bot("plain"))
    assert bf.values == {} and bf.instructions == bots.DEFAULT_PROMPT


def test_create_refuses_existing_bot_without_force(openbot_home: Path) -> None:
    path = bots.create_bot("fixer", prompt="old")
    memory = paths.memory_file("fixer", "proj")
    memory.parent.mkdir(parents=True)
    memory.write_text("{}")
    with pytest.raises(UsageError) as e:
        bots.create_bot("fixer", prompt="new")
    assert e.value.exit_code == 2 and "--force" in e.value.one_line()
    assert load_bot_file(path).instructions == "old"
    bots.create_bot("fixer", prompt="new", force=True)
    assert load_bot_file(path).instructions == "new"
    assert memory.read_text() == "{}"  # --force replaces the config, never the bot's memory


@pytest.mark.parametrize("name", ["../x", "a/b", "", ".hidden", "x" * 65])
def test_create_refuses_unsafe_names(name: str, openbot_home: Path) -> None:
    with pytest.raises(UsageError, match="invalid bot name"):
        bots.create_bot(name)
    assert not (openbot_home / "x").exists()


def test_list_examples(examples: Path) -> None:
    assert bots.list_examples() == ["demo"]


def test_list_examples_without_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(paths, "SHIPPED_BOTS", tmp_path / "missing")
    assert bots.list_examples() == []


def test_create_from_example_copies_files_and_keeps_the_script_path_relative(
    examples: Path, openbot_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = bots.create_bot("mine", from_example="demo")
    dest = path.parent
    assert (dest / "notes" / "readme.txt").read_text() == "extra file"
    assert mode(dest / "script.json") == 0o600 and mode(dest / "notes") == 0o700
    text = path.read_text()
    assert "# Replays a script: no API key needed." in text  # the example's comments are kept
    bf = load_bot_file(path)
    assert bf.config.model == "scripted:script.json"  # a run resolves it from the bot's directory
    assert bf.config.description == "Demo example" and bf.instructions == "Say hello."
    assert ScriptedModel.from_file(dest / "script.json").remaining == 1


def test_create_from_example_with_overrides(examples: Path) -> None:
    bf = load_bot_file(bots.create_bot("mine", description="Mine", prompt="Other task", from_example="demo"))
    assert bf.config.description == "Mine" and bf.instructions == "Other task"
    assert bf.config.max_iterations == 1


def test_create_from_example_keeps_absolute_script_path(examples: Path) -> None:
    (examples / "abs").mkdir()
    (examples / "abs" / "config.md").write_text('+++\nmodel = "scripted:/srv/s.json"\n+++\nGo.\n')
    assert load_bot_file(bots.create_bot("a", from_example="abs")).config.model == "scripted:/srv/s.json"


def test_create_from_unknown_example_lists_examples(examples: Path, openbot_home: Path) -> None:
    with pytest.raises(NotFoundError) as e:
        bots.create_bot("mine", from_example="dmeo")
    assert "'dmeo'" in e.value.message and "demo" in e.value.hint
    assert not (openbot_home / "bots" / "mine").exists()


def test_delete_removes_everything(openbot_home: Path) -> None:
    bots.create_bot("gone")
    memory = paths.memory_file("gone", "proj")
    memory.parent.mkdir(parents=True)
    memory.write_text("{}")
    assert bots.delete_bot("gone") == openbot_home / "bots" / "gone"
    assert not (openbot_home / "bots" / "gone").exists()


def test_delete_unknown_bot() -> None:
    with pytest.raises(NotFoundError, match="no bot named 'ghost'"):
        bots.delete_bot("ghost")


def test_delete_refuses_repo_committed_bot(repo: Path) -> None:
    committed = repo / ".openbot" / "bots" / "ci" / "config.md"
    committed.parent.mkdir(parents=True)
    committed.write_text("Review.\n")
    with pytest.raises(UsageError) as e:
        bots.delete_bot("ci", repo)
    assert "committed in the repository" in e.value.message and str(committed) in e.value.message
    assert "--home" not in e.value.hint  # there is no home bot to point at
    assert committed.is_file()


def test_delete_home_bot_shadowed_by_a_committed_one(repo: Path, openbot_home: Path) -> None:
    # The home bot wins over a committed bot of the same name, so `delete ci` means the home bot.
    bots.create_bot("ci")
    committed = repo / ".openbot" / "bots" / "ci" / "config.md"
    committed.parent.mkdir(parents=True)
    committed.write_text("Review.\n")
    assert bots.delete_bot("ci", repo) == openbot_home / "bots" / "ci"
    assert not (openbot_home / "bots" / "ci").exists() and committed.is_file()
    with pytest.raises(NotFoundError, match="no home bot named 'ci'"):
        bots.delete_bot("ci", repo, home=True)


def test_a_home_bot_shadows_a_committed_bot_of_its_name(repo: Path, openbot_home: Path) -> None:
    bots.create_bot("ci")
    bots.create_bot("solo")
    committed = repo / ".openbot" / "bots" / "ci" / "config.md"
    committed.parent.mkdir(parents=True)
    committed.write_text("Review.\n")
    rows = [(ref.name, ref.source, shadowed) for ref, shadowed in bots.bots_by_source(repo)]
    assert rows == [("ci", "home", False), ("ci", "repo", True), ("solo", "home", False)]
    ref = bots.find_bot("ci", repo)
    assert ref.source == "home" and ref.other == committed
    assert bots.find_bot("ci", repo, "repo").config_path == committed
    with pytest.raises(NotFoundError, match="no bot 'solo' committed in this repository"):
        bots.find_bot("solo", repo, "repo")
    assert bots.all_bots(repo)["ci"].source == "home"


def write_run(bot: str, run_id: str, **fields: object) -> Path:
    record = paths.runs_dir(bot, "proj") / run_id / "run.json"
    record.parent.mkdir(parents=True)
    data = {"run_id": run_id, "status": "running", "host": socket.gethostname(), "pid": os.getpid()}
    record.write_text(json.dumps({**data, **fields}))
    return record


def dead_pid() -> int:
    proc = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    return int(proc.stdout)  # exited and reaped: nothing holds this pid (until the kernel reuses it)


def test_delete_refuses_a_bot_whose_run_is_alive(openbot_home: Path) -> None:
    # Bug fixed: `bots delete --yes` removed a running bot's directory and its run crashed with a traceback.
    bots.create_bot("busy")
    write_run("busy", "20250101T000000Z-aaaa", status="finished")
    write_run("busy", "20250102T000000Z-bbbb")  # this test's own process: alive on this host
    with pytest.raises(UsageError) as e:
        bots.delete_bot("busy")
    assert "run 20250102T000000Z-bbbb" in e.value.message and f"pid {os.getpid()}" in e.value.message
    assert "stop it first" in e.value.hint
    assert (openbot_home / "bots" / "busy" / "config.md").is_file()


@pytest.mark.parametrize(
    "fields",
    [
        {"status": "finished"},
        {"status": "failed"},
        {"host": "some-other-machine"},
        {"pid": "dead"},  # the pid is replaced by a dead one below
    ],
)
def test_delete_allows_a_bot_whose_runs_are_over(fields: dict, openbot_home: Path) -> None:
    bots.create_bot("idle")
    if fields.get("pid") == "dead":
        fields = {"pid": dead_pid()}
    write_run("idle", "20250102T000000Z-cccc", **fields)
    (paths.runs_dir("idle", "proj") / "torn" / "run.json").parent.mkdir()
    (paths.runs_dir("idle", "proj") / "torn" / "run.json").write_text('{"status": "runn')
    assert bots.live_runs("idle") == []
    bots.delete_bot("idle")
    assert not (openbot_home / "bots" / "idle").exists()
