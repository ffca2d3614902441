"""`openbot run --no-worktree` works in the user's own checkout: it edits files, never the user's `.git`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from openbot.sandbox import kernel_support
from tests.helpers import complete, events, git, make_bot, reply, run_cli, sessions, shell

pytestmark = pytest.mark.skipif(
    kernel_support().landlock_abi == 0, reason=f"the kernel has no Landlock: {kernel_support().detail}"
)


def edit(id: str, **input: Any) -> dict[str, Any]:
    return {"name": "edit", "input": input, "id": id}


def test_no_worktree_edits_the_checkout_but_not_its_git_dir(repo: Path, tmp_path: Path) -> None:
    marker = tmp_path / "PWNED"
    fsmonitor = f'[core]\n\tfsmonitor = "touch {marker}; false"'
    make_bot(
        "inplace",
        [
            reply(
                "",
                edit(
                    "edit-readme", command="str_replace", path="README.md", old_str="# demo", new_str="# new"
                ),
                shell("echo more >> README.md", "shell-readme"),
                shell(f"printf '#!/bin/sh\\ntouch {marker}\\n' > .git/hooks/post-checkout", "shell-hook"),
                shell(f"printf '{fsmonitor}\\n' >> .git/config", "shell-config"),
                shell(f"git config core.fsmonitor 'touch {marker}'", "shell-git-config"),
                shell("echo x > top.txt", "shell-top"),
                edit(
                    "edit-config",
                    command="str_replace",
                    path=".git/config",
                    old_str="[core]",
                    new_str=fsmonitor,
                ),
                edit("edit-hook", command="create", path=".git/hooks/x", file_text="#!/bin/sh\n"),
                edit("edit-top", command="create", path="top.txt", file_text="x\n"),
            ),
            reply("", complete("edited the readme", "review")),
        ],
    )
    config_before = (repo / ".git" / "config").read_bytes()
    head_before = git(repo, "rev-parse", "HEAD")

    out = run_cli("run", "inplace", "--no-worktree", "--json", cwd=repo)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["branch"] == "main"

    evs = events(sessions("inplace")[-1])
    codes = {e["tool_use_id"]: e["exit_code"] for e in evs if e["type"] == "command"}
    results = {e["tool_use_id"]: e for e in evs if e["type"] == "tool_result"}
    assert codes["shell-readme"] == 0 and not results["edit-readme"]["is_error"]
    for denied in ("shell-hook", "shell-config", "shell-git-config", "shell-top"):
        assert codes[denied] != 0, denied
    for refused in ("edit-config", "edit-hook"):
        assert results[refused]["is_error"] and "git's own files" in results[refused]["content"], refused
    assert results["edit-top"]["is_error"] and "sandbox forbids" in results["edit-top"]["content"]

    assert (repo / "README.md").read_text() == "# new\nmore\n"
    assert (repo / ".git" / "config").read_bytes() == config_before
    assert not (repo / ".git" / "hooks" / "post-checkout").exists()
    assert not (repo / ".git" / "hooks" / "x").exists() and not (repo / "top.txt").exists()
    # The user's next git commands run nothing the agent planted; the work is theirs to commit.
    status = subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True)
    assert status.stdout == " M README.md\n" and not marker.exists()
    assert git(repo, "rev-parse", "HEAD") == head_before
