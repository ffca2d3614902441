"""`openbot doctor` starts each configured MCP server (sandboxed) and lists its tools, one line each."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import make_bot, run_cli


def test_doctor_starts_each_server_and_says_one_line_per_failure(repo: Path) -> None:
    config = """
[mcp_servers.tools]
command = "${OPENBOT_PYTHON}"
args = ["-m", "openbot.testing.mcpserver"]
tools = ["add", "echo"]

[mcp_servers.broken]
command = "sh"
args = ["-c", "echo 'tracker: bad credentials' >&2; exit 1"]
"""
    make_bot("linked", [], config="sleep_secs = 0\n" + config)
    out = run_cli("doctor", cwd=repo)
    assert out.returncode == 1
    lines = out.stdout.splitlines()
    [ok] = [line for line in lines if "MCP server 'tools'" in line]
    assert ok.startswith("PASS bot linked: ") and "2 tool(s) offered: echo, add" in ok
    [bad] = [line for line in lines if "MCP server 'broken'" in line]
    assert bad.startswith("FAIL bot linked: ") and "tracker: bad credentials" in bad
