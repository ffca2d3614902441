"""`--no-worktree` works in the user's own checkout: what configures later runs outside the sandbox there —
`.openbot/` (committed bots and skills) and an in-tree hooks directory — stays read-only to the agent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from openbot.sandbox import kernel_support
from tests.helpers import complete, events, git, make_bot, reply, run_cli, sessions, shell, walk


def commit_bot(repo: Path, name: str) -> Path:
    config = repo / ".openbot" / "bots" / name / "config.md"
    config.parent.mkdir(parents=True)
    config.write_text('+++\nmodel = "scripted:script.json"\n+++\nWork.\n')
    (config.parent / "script.json").write_text(json.dumps({"responses": []}))
    return config


@pytest.mark.skipif(kernel_support().landlock_abi == 0, reason="the kernel has no Landlock")
@pytest.mark.parametrize("hooks", [".githooks", ".husky/_"])
def test_no_worktree_never_lets_the_agent_write_openbot_or_the_hooks_dir(repo: Path, hooks: str) -> None:
    config = commit_bot(repo, "ci")
    hook = repo / hooks / "post-merge"
    husky_own = repo / ".husky" / "pre-commit"  # husky's `_/` runs the hooks kept beside it
    for path in (hook, husky_own):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("#!/bin/sh\necho hook\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "hooks")
    git(repo, "config", "core.hooksPath", hooks)
    attacks = {
        "config": f"echo 'sandbox = 1' >> {config.relative_to(repo)}",
        "new-bot": "mkdir -p .openbot/bots/evil && echo x > .openbot/bots/evil/config.md",
        "skill": "mkdir -p .openbot/skills && echo x > .openbot/skills/planted.md",
        "hook": f"echo pwned >> {hook.relative_to(repo)}",
        "new-hook": f"echo pwned > {hooks}/pre-push",
        "rename": "mv .openbot .openbot-old",
    }
    if hooks == ".husky/_":
        attacks["husky"] = "echo pwned >> .husky/pre-commit"
    calls = [shell(cmd, id) for id, cmd in attacks.items()]
    edit = {
        "name": "edit",
        "id": "edit-config",
        "input": {"command": "create", "path": str(config), "file_text": "x"},
    }
    make_bot(
        "inplace", [reply("", *calls, edit, shell("echo ok >> README.md", "legit")), reply("", complete())]
    )
    before = {p: p.read_bytes() for p in walk(repo) if p.is_file() and ".git" not in p.parts}
    proc = run_cli("run", "inplace", "--no-worktree", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    evs = events(sessions("inplace")[-1])
    codes = {e["tool_use_id"]: e["exit_code"] for e in evs if e["type"] == "command"}
    assert codes["legit"] == 0 and [id for id in attacks if codes[id] == 0] == [], codes
    assert [e for e in evs if e["type"] == "tool_result" and e["tool_use_id"] == "edit-config"][0]["is_error"]
    after = {p: p.read_bytes() for p in walk(repo) if p.is_file() and ".git" not in p.parts}
    assert {p for p in after if after[p] != before.get(p)} == {repo / "README.md"}
