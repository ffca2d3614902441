"""A repository deleted and made again at the same path is a new project: it does not inherit the old one's
memory and history in its prompt. The real CLI, real repositories, a scripted bot."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from openbot import paths
from tests.helpers import complete, make_bot, make_repo, reply, run_cli, sessions, wait_for

REMEMBER = {"name": "memory", "input": {"action": "set", "key": "build", "value": "use make -j9 (old repo)"}}


def first_prompt(run_id: str) -> str:
    [convo] = paths.bots_dir().glob(f"keeper/workspaces/*/runs/{run_id}/conversation.jsonl")
    for line in convo.read_text().splitlines():
        record = json.loads(line)
        message = record.get("message") or {}
        if message.get("role") == "user":
            return "\n".join(b.get("text", "") for b in message["content"])
    raise AssertionError("no prompt")


def run(repo: Path) -> dict[str, object]:
    out = run_cli("run", "keeper", "--json", cwd=repo)
    assert out.returncode == 0, out.stderr
    return dict(json.loads(out.stdout))


def test_a_repository_recreated_at_the_same_path_starts_with_its_own_state(tmp_path: Path) -> None:
    path = tmp_path / "app"
    make_repo(path, {"README.md": "# the old app\n"})
    bot = make_bot("keeper", [reply("", REMEMBER), reply("", complete("noted the build"))])
    old = run(path)
    (bot / "script.json").write_text(json.dumps({"responses": [reply("", complete())]}))  # from now on
    again = run(path)  # the same repository: its memory and history are there
    assert again["project"] == old["project"] and "use make -j9" in first_prompt(str(again["run_id"]))

    shutil.rmtree(path)
    make_repo(path, {"README.md": "# a new app, same directory\n"})
    new = run(path)
    prompt = first_prompt(str(new["run_id"]))
    assert new["project"] != old["project"]
    assert "use make -j9" not in prompt and "(none: this is the first session)" in prompt
    assert "noted the build" not in prompt
    memory = run_cli("memory", "keeper", "show", cwd=path)
    assert memory.returncode == 0 and "use make -j9" not in memory.stdout
    assert len(sessions("keeper")) == 3  # the old project's two sessions are still there, under its own key


def test_once_openbot_exits_nothing_is_still_being_deleted_in_the_repository(tmp_path: Path) -> None:
    """A finished run's repository is deleted by a detached `rm`, not waited for: it works on a copy moved
    out of the user's repository (into OPENBOT_HOME/trash), so the user may delete or recreate the
    repository the moment `openbot run` exits. Here `rm` does nothing at all (a shim that logs its
    arguments): whatever it was handed must already be outside the repository."""
    path = make_repo(tmp_path / "app", {"README.md": "# the app\n"})
    make_bot("keeper", [reply("", complete())])
    shim, log = tmp_path / "bin" / "rm", tmp_path / "rm.log"
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\n')
    shim.chmod(0o755)
    out = run_cli("run", "keeper", cwd=path, env={"PATH": f"{shim.parent}:{os.environ['PATH']}"})
    assert out.returncode == 0, out.stderr
    runs = path / ".git" / "openbot-worktrees"
    assert not [p.name for p in runs.iterdir() if p.name != ".lock"]  # no run repository, no .trash-*
    # the rm is detached and not waited for (at nice 19 since e933c04, behind a busy machine): its log is
    # what it was handed, whenever it gets a core
    wait_for(lambda: log.exists() and log.read_text().endswith("\n"))
    handed = log.read_text().split()
    trash = paths.home() / "trash"
    assert handed and all(Path(p).parent == trash for p in handed if p.startswith("/")), handed
    assert all(Path(p).exists() for p in handed if p.startswith("/"))  # the shim deleted nothing
