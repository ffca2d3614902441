"""Verification checks what is merged, through the real CLI with a shell-capable MCP server: the child a
server started for the agent is stopped before the check, and when the branch still moves after the
check (here the server itself moves it, as a spared process can) the merge is refused, said, and main
stays where it was. Every step waits on a file the test writes, never on a clock."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

from openbot import paths
from tests.helpers import complete, git, make_bot, make_repo, reply, start_run, wait_for

# A shell-capable server: `spawn` starts a detached child for the agent; once `move-now` appears in its
# bot dir, the server itself commits on the agent's branch (`moved-by-server` in the run's git dir says so).
SERVER = '''
import os, subprocess, sys, threading, time
from pathlib import Path
from mcp.server.mcpserver import MCPServer

server = MCPServer("shelly", log_level="WARNING")
here, work = Path(sys.argv[0]).parent, os.environ["OPENBOT_WORKDIR"]


@server.tool()
def spawn(command: str) -> str:
    """Run a shell command in the background."""
    subprocess.Popen(["sh", "-c", command], cwd=work, start_new_session=True,
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return "started"


def move_later() -> None:
    while not (here / "move-now").exists():
        time.sleep(0.05)
    git_dir = subprocess.run(["git", "rev-parse", "--absolute-git-dir"], cwd=work, capture_output=True,
                             text=True).stdout.strip()
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "moved by the server"], cwd=work)
    Path(git_dir, "moved-by-server").write_text("done")


threading.Thread(target=move_later, daemon=True).start()
server.run()
'''


def processes_naming(token: str) -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if token.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(int(pid))
        except OSError:
            continue
    return found


def test_the_merge_takes_exactly_the_verified_commit_and_a_servers_child_is_stopped_first(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo")
    token = uuid.uuid4().hex
    bot_dir = paths.bot_home("racer")
    child = (
        f": child-{token}; while [ ! -e {bot_dir}/child-go ]; do sleep 0.05; done;"
        ' git commit -q --allow-empty -m "moved by the child"'
    )
    check = f": verify-{token}; while [ ! -e {bot_dir}/verify-go ]; do sleep 0.05; done"
    work = "echo work > work.txt && git add work.txt && git commit -qm work"
    script = [
        reply("", {"name": "shell", "input": {"command": work}}),
        reply("", {"name": "shelly__spawn", "input": {"command": child}}),
        reply("", complete("done", "merge")),
    ]
    config = (
        f"verify = [{json.dumps(check)}]\nverify_timeout_secs = 300\nsleep_secs = 0\n"
        '[mcp_servers.shelly]\ncommand = "${OPENBOT_PYTHON}"\nargs = ["${BOT_DIR}/server.py"]\n'
    )
    make_bot("racer", script, config)
    (bot_dir / "server.py").write_text(SERVER)
    proc = start_run("run", "racer", "--json", cwd=repo)
    try:
        # the check runs (or the run ended without one: its output says why)
        wait_for(lambda: bool(processes_naming(f"verify-{token}")) or proc.poll() is not None, timeout=120)
        assert proc.poll() is None, proc.communicate()
        survivors = processes_naming(f"child-{token}")
        (bot_dir / "move-now").write_text("")
        runs = repo / ".git" / "openbot-worktrees"
        wait_for(lambda: any(runs.glob("racer-*.git/moved-by-server")), timeout=60)
        (bot_dir / "child-go").write_text("")
        (bot_dir / "verify-go").write_text("")
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert survivors == [], "the MCP server's child outlived the stop before the check"
    assert proc.returncode == 0, err
    result = json.loads(out)
    verified = result["verified_sha"]
    assert result["verified"] is True and verified, result
    said = result["action_message"]
    assert said.startswith(f"not merged: the branch moved after openbot verified {verified[:12]}"), said
    assert git(repo, "log", "-1", "--format=%s", "main") == "initial"
    assert git(repo, "log", "-1", "--format=%s", result["branch"]) == "moved by the server"
    assert git(repo, "notes", "--ref=openbot", "show", verified).startswith("Verified-by: openbot")
