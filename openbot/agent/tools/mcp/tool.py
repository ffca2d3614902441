"""One MCP server tool as an openbot `Tool`: named `<server>__<tool>`, described and typed by the server.

Its result is handled like a shell command's output: redacted, then compacted for the model when long,
the full text kept in `<session>/outputs/<tool_use_id>.log`; each call is one `mcp_call` event. A call
that gets no result (timeout, dead server) is an is_error tool_result, never an exception in the turn.
"""

from __future__ import annotations

import re
import time

from openbot.agent.models.base import ToolSpec
from openbot.agent.tools.base import ToolContext, ToolOutput
from openbot.agent.tools.mcp.client import McpConnection, RemoteTool
from openbot.agent.tools.trim_output import OutputCompactor
from openbot.events import McpCall, Notice
from openbot.files import write_atomic
from openbot.paths import make_private_dir

MAX_DESCRIPTION = 2000  # a server's description is its own prose: keep it from crowding the prompt
TOOL_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # what the Messages API accepts as a tool name


def tool_name(server: str, tool: str) -> str:
    return f"{server}__{tool}"


class McpTool:
    reports_itself = True  # emits McpCall itself

    def __init__(self, conn: McpConnection, remote: RemoteTool) -> None:
        self.conn, self.remote = conn, remote
        description = remote.description.strip() or f"The {remote.name} tool."
        if len(description) > MAX_DESCRIPTION:
            description = description[:MAX_DESCRIPTION] + " […]"
        self.spec = ToolSpec(
            name=tool_name(conn.spec.name, remote.name),
            description=f"[MCP server '{conn.spec.name}'] {description}",
            input_schema=remote.input_schema,
        )

    def run(self, input: dict[str, object], ctx: ToolContext, tool_use_id: str) -> ToolOutput:
        spec = self.conn.spec
        timeout = spec.timeout_secs
        started = time.monotonic()
        if ctx.deadline is not None:  # no call outlives the run's wall-time budget (max_minutes)
            timeout = min(timeout, ctx.deadline - started)
        if timeout <= 0:
            text, is_error, crashed = (
                "the run's time budget (max_minutes) is used up: no more calls",
                True,
                False,
            )
        else:
            outcome = self.conn.call(self.remote.name, input, timeout, ctx.cancel)
            text, crashed = outcome.error or outcome.text, outcome.crashed
            if outcome.restarted:
                message = f"MCP server '{spec.name}' had stopped; started it again"
                ctx.sink.emit(
                    Notice(kind="mcp_server_restarted", message=message, data={"server": spec.name})
                )
            is_error = outcome.is_error or bool(outcome.error)
        duration_ms = int((time.monotonic() - started) * 1000)
        output, total, full_path = _compact(ctx, tool_use_id, ctx.redact(text))
        if crashed:
            ctx.sink.emit(
                Notice(kind="mcp_server_crashed", message=ctx.redact(text), data={"server": spec.name})
            )
        ctx.sink.emit(
            McpCall(
                tool_use_id=tool_use_id,
                server=spec.name,
                tool=self.remote.name,
                arguments=input,
                duration_ms=duration_ms,
                is_error=is_error,
                output=output,
                output_bytes=total,
                full_output_path=full_path,
            )
        )
        return ToolOutput(output or "(no output)", is_error=is_error)


def _compact(ctx: ToolContext, tool_use_id: str, text: str) -> tuple[str, int, str]:
    """(what the model sees, bytes in all, the full-output file or "")."""
    data = text.encode("utf-8", "surrogateescape")
    out_dir = ctx.session_dir / "outputs"
    path = out_dir / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', tool_use_id) or 'mcp'}.log"
    compactor = OutputCompactor(str(path))
    compactor.feed(data)
    if not compactor.compacted:
        return compactor.result(), compactor.total_bytes, ""
    make_private_dir(out_dir)
    write_atomic(path, data)
    return compactor.result(), compactor.total_bytes, str(path)
