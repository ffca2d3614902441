"""The MCP client against a real server written with the SDK (openbot.testing.mcpserver), over stdio and
streamable HTTP on loopback: tools offered by allow/deny, results, errors, timeouts, crashes, start-up
failures — none of them ever raises into the turn."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openbot.agent.tools.base import ToolContext, ToolOutput
from openbot.agent.tools.mcp import McpHub, client
from openbot.agent.tools.mcp.launch import launch_for
from openbot.config.mcp import parse_servers
from openbot.events import ListSink
from tests.helpers import wait_for

SERVER = {"command": "${OPENBOT_PYTHON}", "args": ["-m", "openbot.testing.mcpserver"]}


def make_hub(tmp: Path, servers: dict[str, Any], environ: dict[str, str] | None = None) -> McpHub:
    specs = parse_servers(servers, "test.md", network=False)
    env = environ if environ is not None else dict(os.environ)
    hub = McpHub(
        specs,
        lambda s: launch_for(
            s, environ=env, base_env={"PATH": os.environ["PATH"]}, sandbox=None, workdir=tmp, bot_dir=tmp
        ),
        tmp / "mcp-logs",
    )
    hub.start()
    return hub


class Caller:
    def __init__(self, hub: McpHub, tmp: Path) -> None:
        self.tools = {t.spec.name: t for t in hub.tools()}
        self.sink = ListSink()
        self.ctx = ToolContext(workdir=tmp, session_dir=tmp, env={}, sink=self.sink, redact=self._redact)

    @staticmethod
    def _redact(text: str) -> str:
        return text.replace("hunter2-secret-value", "[REDACTED]")

    def __call__(self, name: str, **args: Any) -> ToolOutput:
        return self.tools[name].run(args, self.ctx, f"toolu_{len(self.sink.events)}")

    def last(self, type: str) -> Any:
        return [e for e in self.sink.events if e.type == type][-1]


@pytest.fixture(scope="module")
def stdio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[McpHub, Path]]:
    tmp = tmp_path_factory.mktemp("stdio")
    # "t" has room for slow machines; "s" (the same server) times out after 1 s, for the hang test
    config = {**SERVER, "deny_tools": ["hidden_*"], "timeout_secs": 120}
    hub = make_hub(tmp, {"t": config, "s": {**SERVER, "tools": ["nap", "echo"], "timeout_secs": 1}})
    yield hub, tmp
    hub.close()


def test_tools_are_offered_by_name_with_the_servers_schemas(stdio: tuple[McpHub, Path]) -> None:
    hub, _ = stdio
    specs = {t.spec.name: t.spec for t in hub.tools()}
    assert "t__add" in specs and "t__echo" in specs
    assert "t__hidden_tool" not in specs  # deny_tools
    assert specs["t__add"].input_schema["properties"]["a"]["type"] == "integer"
    assert specs["t__add"].input_schema["required"] == ["a", "b"]
    assert specs["t__add"].description.startswith("[MCP server 't'] Add two integers")
    [notice] = [n for n in hub.take_notices() if n.data["server"] == "t"]
    assert notice.kind == "mcp_server_started" and "hidden_tool" not in notice.message


def test_results_errors_and_long_output(stdio: tuple[McpHub, Path]) -> None:
    hub, tmp = stdio
    call = Caller(hub, tmp)
    assert call("t__add", a=2, b=40) == ToolOutput("42", is_error=False)
    event = call.last("mcp_call")
    assert (event.server, event.tool, event.arguments, event.is_error) == (
        "t",
        "add",
        {"a": 2, "b": 40},
        False,
    )
    out = call("t__fail", message="no such issue")
    assert out.is_error and "no such issue" in out.content and call.last("mcp_call").is_error
    out = call("t__lines", count=5000)
    event = call.last("mcp_call")
    assert "line 1\n" in out.content and "line 5000" in out.content and "line 2500\n" not in out.content
    assert event.output == out.content and event.output_bytes > 40_000
    assert "line 2500\n" in Path(event.full_output_path).read_text()  # the full text is kept
    assert call("t__echo", text="token hunter2-secret-value").content == "token [REDACTED]"


def test_a_call_that_hangs_times_out_and_the_server_stays_usable(stdio: tuple[McpHub, Path]) -> None:
    hub, tmp = stdio
    call = Caller(hub, tmp)
    out = call("s__nap", secs=30)
    assert out.is_error and "within 1 s (timeout_secs)" in out.content
    assert call("s__echo", text="still here").content == "still here"


def test_a_cancelled_run_stops_waiting_for_a_call(stdio: tuple[McpHub, Path]) -> None:
    hub, tmp = stdio
    call = Caller(hub, tmp)
    threading.Timer(0.2, call.ctx.cancel.set).start()
    out = call("t__nap", secs=30)
    assert out.is_error and out.content.startswith("cancelled")


def test_a_server_that_crashes_is_an_error_result_then_restarted_a_few_times(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(client, "MAX_RESTARTS", 1)
    hub = make_hub(tmp_path, {"c": SERVER})
    try:
        call = Caller(hub, tmp_path)
        out = call("c__crash")
        assert out.is_error and "is gone" in out.content
        assert [e.kind for e in call.sink.events if e.type == "notice"] == ["mcp_server_crashed"]
        assert call("c__echo", text="back").content == "back"  # started again for this call
        assert [e.kind for e in call.sink.events if e.type == "notice"][-1] == "mcp_server_restarted"
        assert call("c__crash").is_error  # the second crash: it stays down (MAX_RESTARTS = 1 here)
        again = call("c__echo", text="x")
        assert again.is_error and "is not running: it exited" in again.content
    finally:
        hub.close()


def test_servers_that_cannot_start_are_notices_and_offer_nothing(tmp_path: Path) -> None:
    secs = f"30.{os.getpid()}"  # an argv no other process on the machine has
    servers = {
        "missing": {"command": "/nonexistent/mcp-server"},
        "silent": {"command": "sleep", "args": [secs], "startup_timeout_secs": 0.5},
        "noisy": {"command": "sh", "args": ["-c", "echo 'cannot open the database' >&2; exit 4"]},
    }
    hub = make_hub(tmp_path, servers)
    try:
        assert hub.tools() == []
        notices = {n.data["server"]: n for n in hub.take_notices()}
        assert all(n.kind == "mcp_server_failed" for n in notices.values())
        assert "FileNotFoundError" in notices["missing"].message
        assert "did not start within 0.5 s (no answer)" in notices["silent"].message
        assert "cannot open the database" in notices["noisy"].message  # its stderr, said
    finally:
        hub.close()
    assert not any(_tagged_alive("sleep", secs))


def _tagged_alive(*argv: str) -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:-1]
        except OSError:
            continue
        if [c.decode(errors="replace") for c in cmdline] == list(argv):
            found.append(int(pid))
    return found


def test_the_environment_is_the_allowlist_plus_the_servers_env(tmp_path: Path) -> None:
    environ = {**os.environ, "TRACKER_TOKEN": "hunter2-secret-value", "OTHER_TOKEN": "x" * 20}
    environ["ANTHROPIC_API_KEY"] = "sk-ant-api03-never-to-a-server-0123456789"
    hub = make_hub(tmp_path, {"e": {**SERVER, "env": ["TRACKER_TOKEN"]}}, environ)
    try:
        names = Caller(hub, tmp_path)("e__env_names").content.split()
        assert "TRACKER_TOKEN" in names and "PATH" in names
        assert "ANTHROPIC_API_KEY" not in names and "OTHER_TOKEN" not in names
    finally:
        hub.close()


@pytest.fixture(scope="module")
def http_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("http")
    port_file = tmp / "port"
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


def test_a_streamable_http_server_on_loopback(tmp_path: Path, http_server: str) -> None:
    environ = {**os.environ, "DOCS_TOKEN": "hunter2-secret-value"}
    config = {"url": http_server, "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}, "allow_network": True}
    hub = make_hub(tmp_path, {"docs": config}, environ)
    try:
        call = Caller(hub, tmp_path)
        assert call("docs__add", a=1, b=2).content == "3"
        [notice] = hub.take_notices()
        assert "streamable HTTP over the network" in notice.message
    finally:
        hub.close()
