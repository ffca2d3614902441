"""A real MCP server for tests and benchmarks, written with the official SDK (`MCPServer`, which mcp 2.x
calls what 1.x called FastMCP): `python -m openbot.testing.mcpserver` speaks stdio;
`--http --port-file PATH` serves streamable HTTP on 127.0.0.1 (a free port, written to PATH once listening).

Its tools exercise what openbot must survive: slow calls, a crash mid-call, huge output, errors, and a
look at the environment and the filesystem it was given.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import time
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("openbot-test", log_level="WARNING")


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def env_names() -> str:
    """The names of the environment variables this server sees, one per line."""
    return "\n".join(sorted(os.environ))


@server.tool()
def env_value(name: str) -> str:
    """The value of one environment variable ("" when unset)."""
    return os.environ.get(name, "")


@server.tool()
def nap(secs: float) -> str:
    """Sleep, then answer."""
    time.sleep(secs)
    return f"slept {secs:g} s"


@server.tool()
def crash() -> str:
    """Exit the server process at once, mid-call."""
    os._exit(3)


@server.tool()
def lines(count: int) -> str:
    """`count` numbered lines of output."""
    return "\n".join(f"line {i}" for i in range(1, count + 1))


@server.tool()
def fail(message: str) -> str:
    """Raise an error with this message (the call's result has isError set)."""
    raise ToolError(message)


@server.tool()
def write_file(path: str, text: str) -> str:
    """Write text to a file; says whether the write was allowed."""
    try:
        Path(path).write_text(text)
    except OSError as e:
        return f"denied: {e.strerror}"
    return "written"


@server.tool()
def hidden_tool() -> str:
    """A tool the tests deny by config."""
    return "should never be called"


def _serve_http(port_file: Path) -> None:
    import asyncio

    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    app = server.streamable_http_app()
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    tmp = port_file.with_suffix(".tmp")
    tmp.write_text(str(sock.getsockname()[1]))
    tmp.replace(port_file)  # whole, so a reader never sees half a number
    asyncio.run(uvicorn.Server(config).serve(sockets=[sock]))


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="openbot.testing.mcpserver")
    parser.add_argument("--http", action="store_true", help="serve streamable HTTP on 127.0.0.1")
    parser.add_argument("--port-file", type=Path, help="where to write the port (with --http)")
    parser.add_argument("--tag", help="ignored: lets a test find this process in /proc")
    args = parser.parse_args(argv)
    if args.http:
        _serve_http(args.port_file or Path("mcp-port"))
    else:
        server.run()


if __name__ == "__main__":
    main(sys.argv[1:])
