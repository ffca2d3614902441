"""The run's MCP servers: started together at run start on one event-loop thread, offered as tools, and
stopped on every exit path (`close`, which the runner calls in its `finally`).

What happened at start (tools offered, how each server is reached, or why it is unavailable) becomes
notices in the first session's events, shown live among the run's first lines; a server that fails to
start leaves the run going without its tools. A server that crashes later keeps its tools listed
(the conversation refers to them): the call that found it gone is an error result, the next one starts
it again (a few times a run at most, see client.MAX_RESTARTS).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

from openbot.agent.tools.base import Tool
from openbot.agent.tools.mcp.client import STOP_SECS, Launch, McpConnection, RemoteTool
from openbot.agent.tools.mcp.tool import TOOL_NAME_RE, McpTool, tool_name
from openbot.config.mcp import McpServerSpec
from openbot.events import Notice


class McpHub:
    def __init__(
        self, specs: list[McpServerSpec], launch: Callable[[McpServerSpec], Launch], log_dir: Path
    ) -> None:
        self.specs, self.launch, self.log_dir = specs, launch, log_dir
        self.connections: list[McpConnection] = []
        self.notices: list[Notice] = []  # for the next session's events (drained by `take_notices`)
        self._tools: list[Tool] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    def start(self, cancel: threading.Event | None = None) -> None:
        """Start every server (in parallel) and list their tools; what happened becomes `notices`.
        A set `cancel` (the run's ctrl-c) stops waiting for servers still starting."""
        if not self.specs:
            return
        # The SDK logs a hostile server's garbage with tracebacks; the run reports failures itself.
        logging.getLogger("mcp").addHandler(logging.NullHandler())
        logging.getLogger("mcp").propagate = False
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="openbot-mcp", daemon=True)
        self._thread.start()
        self.log_dir.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        for spec in self.specs:
            try:
                launch = self.launch(spec)
            except Exception as e:
                conn = McpConnection(spec, Launch(), self._loop, self.log_dir / f"{spec.name}.stderr.log")
                conn.dead = f"cannot be launched: {e}"
            else:
                conn = McpConnection(spec, launch, self._loop, self.log_dir / f"{spec.name}.stderr.log")
                conn.start()
            self.connections.append(conn)
        for conn in self.connections:
            if not conn.dead:
                conn.wait_started(started + conn.spec.startup_timeout_secs, cancel or threading.Event())
            self._offer(conn)

    def _offer(self, conn: McpConnection) -> None:
        spec = conn.spec
        where = _where(spec)
        if conn.dead:
            message = f"MCP server '{spec.name}' {where} is unavailable: {conn.dead}{conn.stderr_tail()}; "
            message += "the run goes on without its tools"
            self.notices.append(Notice(kind="mcp_server_failed", message=message, data={"server": spec.name}))
            return
        offered: list[RemoteTool] = []
        skipped: list[RemoteTool] = []
        for remote in conn.tools:
            name = tool_name(spec.name, remote.name)
            usable = TOOL_NAME_RE.match(name) and remote.input_schema.get("type") == "object"
            if spec.offers(remote.name):
                (offered if usable else skipped).append(remote)
        self._tools += [McpTool(conn, r) for r in offered]
        names = ", ".join(r.name for r in offered) or "none"
        message = f"MCP server '{spec.name}' {where}: {len(offered)} tool(s) offered: {names}"
        if skipped:
            message += f"; not offered (invalid name or schema): {', '.join(r.name[:40] for r in skipped)}"
        self.notices.append(Notice(kind="mcp_server_started", message=message, data={"server": spec.name}))

    def tools(self) -> list[Tool]:
        return list(self._tools)

    def take_notices(self) -> list[Notice]:
        taken, self.notices = self.notices, []
        return taken

    def close(self) -> None:
        """Stop every server; bounded (the SDK's own escalation to SIGKILL takes ~4 s), never raises."""
        if self._loop is None:
            return
        for conn in self.connections:
            conn.stop()
        deadline = time.monotonic() + STOP_SECS
        for conn in self.connections:
            conn.wait_stopped(deadline)
        loop, thread = self._loop, self._thread
        self._loop = None
        loop.call_soon_threadsafe(loop.stop)
        if thread is not None:
            thread.join(1.0)
            if not thread.is_alive():
                loop.close()


def _where(spec: McpServerSpec) -> str:
    """How the server is reached, said at run start: an HTTP server always uses the network."""
    from openbot.config.notify import shown_url

    if spec.url:
        return f"(streamable HTTP over the network: {shown_url(spec.url)})"
    return "(stdio, in the run's sandbox" + (
        ", network allowed for this server)" if spec.allow_network else ")"
    )
