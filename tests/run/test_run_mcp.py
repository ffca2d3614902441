"""MCP servers in real runs: a scripted model and the Anthropic backend (loopback Messages API) call the
tools of a real SDK server (stdio in the run's sandbox, streamable HTTP on loopback)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openbot import paths
from openbot.testing.fakeapi import FakeAnthropic
from openbot.testing.fakeapi import reply as api_reply
from tests.helpers import (
    complete,
    events,
    make_bot,
    reply,
    run_cli,
    sessions,
    start_run,
    tool_started,
    wait_for,
)

KEY = "sk-ant-api03-TESTKEY-do-not-leak-0123456789abcdef"


def server_config(name: str = "tools", extra: str = "", tag: str = "") -> str:
    args = ["-m", "openbot.testing.mcpserver", *([f"--tag={tag}"] if tag else [])]
    return f'[mcp_servers.{name}]\ncommand = "${{OPENBOT_PYTHON}}"\nargs = {json.dumps(args)}\n{extra}\n'


def call(name: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "input": args}


def processes_with(tag: str) -> list[str]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if f"--tag={tag}".encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(pid)
        except OSError:
            continue
    return found


def test_a_scripted_run_uses_a_stdio_server_inside_the_sandbox(repo: Path, tmp_path: Path) -> None:
    tag = uuid.uuid4().hex
    outside = tmp_path / "outside.txt"
    script = [
        reply("Asking the server.", call("tools__add", a=20, b=22)),
        reply("", call("tools__env_names")),
        reply("", call("tools__write_file", path=str(outside), text="escaped")),
        reply("", call("tools__lines", count=3000)),
        reply("", call("tools__hidden_tool")),
        reply("", complete("asked the server", "review")),
    ]
    config = 'sleep_secs = 0\nenv_passthrough = ["TRACKER_TOKEN"]\n' + server_config(
        extra='deny_tools = ["hidden_tool"]\nenv = ["TRACKER_TOKEN"]', tag=tag
    )
    make_bot("mcp", script, config=config)
    env = {"ANTHROPIC_API_KEY": KEY, "TRACKER_TOKEN": "tracker-secret-0123456789"}
    out = run_cli("run", "mcp", "--json", cwd=repo, env=env)
    assert out.returncode == 0, out.stderr
    assert "MCP server 'tools' (stdio, in the run's sandbox): 9 tool(s) offered" in out.stderr
    [session] = sessions("mcp")
    log = events(session)
    calls = [e for e in log if e["type"] == "mcp_call"]
    assert [(c["server"], c["tool"]) for c in calls] == [
        ("tools", "add"),
        ("tools", "env_names"),
        ("tools", "write_file"),
        ("tools", "lines"),
    ]
    assert calls[0]["arguments"] == {"a": 20, "b": 22} and calls[0]["output"] == "42"
    assert not calls[0]["is_error"] and calls[0]["duration_ms"] >= 0
    names = calls[1]["output"].split()
    assert "TRACKER_TOKEN" in names and "ANTHROPIC_API_KEY" not in names
    assert calls[2]["output"].startswith("denied") and not outside.exists()  # the sandbox holds
    assert calls[3]["full_output_path"] and "line 1500\n" in Path(calls[3]["full_output_path"]).read_text()
    denied = [e for e in log if e["type"] == "tool_result" and e["name"] == "tools__hidden_tool"]
    assert denied and denied[0]["is_error"] and "unknown tool" in denied[0]["content"]
    assert KEY not in (session / "events.jsonl").read_text()
    assert processes_with(tag) == []  # the server ended with the run
    assert "    → ok in " in out.stderr  # the live view shows each call's outcome
    page = tmp_path / "page.html"
    assert run_cli("history", "mcp", "--export", "html", "-o", str(page), cwd=repo).returncode == 0
    html = page.read_text()
    assert "<code>tools__add</code>" in html and "&quot;a&quot;: 20" in html
    shown = run_cli("history", "mcp", "--session", "1", cwd=repo).stdout
    assert "[tools__add: ok, " in shown and "[tools__write_file: ok, " in shown


def test_a_server_that_cannot_start_leaves_the_run_going(repo: Path) -> None:
    config = (
        "sleep_secs = 0\n" + '[mcp_servers.broken]\ncommand = "sh"\nargs = ["-c", "echo no db >&2; exit 1"]\n'
    )
    make_bot("survivor", [reply("", call("broken__query", sql="x")), reply("", complete())], config=config)
    out = run_cli("run", "survivor", cwd=repo)
    assert out.returncode == 0, out.stderr
    assert "MCP server 'broken' (stdio, in the run's sandbox) is unavailable" in out.stderr
    [session] = sessions("survivor")
    log = events(session)
    [notice] = [e for e in log if e["type"] == "notice" and e["kind"] == "mcp_server_failed"]
    assert "no db" in notice["message"]
    [result] = [e for e in log if e["type"] == "tool_result"][:1]
    assert result["is_error"] and "unknown tool 'broken__query'" in result["content"]


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[str]:
    port_file = tmp_path / "port"
    proc = subprocess.Popen(
        [sys.executable, "-m", "openbot.testing.mcpserver", "--http", "--port-file", str(port_file)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(port_file.exists, timeout=30)
        yield f"http://127.0.0.1:{port_file.read_text()}/mcp"
    finally:
        proc.terminate()
        proc.wait(10)


def test_an_http_server_needs_an_allowance_said_at_the_start(repo: Path, http_server: str) -> None:
    headers = 'headers = { Authorization = "Bearer ${DOCS_TOKEN}" }'
    table = f'[mcp_servers.docs]\nurl = "{http_server}"\n{headers}\n'
    make_bot("http", [reply("done")], config="sleep_secs = 0\n" + table)
    refused = run_cli("run", "http", cwd=repo, env={"DOCS_TOKEN": "docs-token-value-123"})
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "MCP server 'docs' is reached over the network (mcp_servers.docs.url)" in refused.stderr
    assert sessions("http") == []

    # The same call twice in a row is "stuck" at max_repeats = 2: MCP calls count for the repeat guard.
    script = [reply("", call("docs__echo", text="hello")), reply("", call("docs__echo", text="hello"))]
    config = "sleep_secs = 0\nmax_iterations = 1\nmax_repeats = 2\n" + table + "allow_network = true\n"
    make_bot("http", script, config=config)
    out = run_cli("run", "http", cwd=repo, env={"DOCS_TOKEN": "docs-token-value-123"})
    assert out.returncode == 3, out.stderr
    first_lines = out.stderr.splitlines()[:6]
    assert any("streamable HTTP over the network: http://127.0.0.1:" in line for line in first_lines)
    [session] = sessions("http")
    log = events(session)
    assert [e["output"] for e in log if e["type"] == "mcp_call"] == ["hello", "hello"]
    assert any(e["type"] == "turn_aborted" and e["reason"] == "stuck" for e in log)


def test_the_anthropic_backend_sees_mcp_tools_and_their_results(repo: Path) -> None:
    d = paths.bot_home("claude")
    d.mkdir(parents=True, exist_ok=True)
    config = 'model = "claude-sonnet-5-5"\nsleep_secs = 0\n' + server_config(extra='tools = ["add", "echo"]')
    (d / "config.md").write_text(f"+++\n{config}+++\nWork.\n")
    script = [
        api_reply("Adding.", tool_calls=[call("tools__add", a=1, b=2)]),
        api_reply("", tool_calls=[call("session_complete", summary="added", action="review")]),
    ]
    with FakeAnthropic(script) as api:
        env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": api.base_url}
        out = run_cli("run", "claude", cwd=repo, env=env)
        assert out.returncode == 0, out.stderr
        api.assert_done()
        bodies = api.bodies
    tools = {t["name"]: t for t in bodies[0]["tools"]}
    assert {"tools__add", "tools__echo", "shell"} <= set(tools) and "tools__lines" not in tools
    assert tools["tools__add"]["input_schema"]["properties"]["b"]["type"] == "integer"
    result = next(
        block
        for message in bodies[1]["messages"]
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    )
    assert result["content"] in ("3", [{"type": "text", "text": "3"}]) and not result.get("is_error")


def test_ctrl_c_during_a_call_ends_the_run_and_its_servers(repo: Path) -> None:
    tag = uuid.uuid4().hex
    config = "sleep_secs = 0\n" + server_config(extra="timeout_secs = 600", tag=tag)
    make_bot("napper", [reply("", call("tools__nap", secs=600)), reply("", complete())], config=config)
    proc = start_run("run", "napper", cwd=repo)
    try:
        wait_for(lambda: tool_started("napper"), timeout=60)
        assert processes_with(tag)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert processes_with(tag) == []
    [session] = sessions("napper")
    [result] = [e for e in events(session) if e["type"] == "mcp_call"]
    assert result["is_error"] and result["output"].startswith("cancelled")
