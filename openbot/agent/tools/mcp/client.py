"""One MCP server connection, driven from openbot's synchronous threads.

The SDK is asyncio (anyio): every connection lives in one task on the hub's event-loop thread, which
enters the transport and the `ClientSession`, lists the tools, then waits to be told to stop — so the
context managers are entered and left in the same task, as anyio requires. Calls are submitted to that
loop with `run_coroutine_threadsafe` and waited for with a timeout, checking the run's cancel flag.

A server that exits closes the connection: pending calls fail with the SDK's "Connection closed", and
the server is marked dead with the last lines of its stderr; the next call starts it again (at most
MAX_RESTARTS times a run). Nothing here raises into the
turn: every failure is a `CallOutcome` with `error` set.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openbot import gate
from openbot.config.mcp import McpServerSpec

POLL_SECS = 0.1
STOP_SECS = 6.0  # the SDK closes stdin, waits 2 s, SIGTERMs the group, waits 2 s, SIGKILLs
MAX_RESTARTS = 2  # per server and run: one that keeps crashing stays down


@dataclass(frozen=True)
class Launch:
    """How to reach the server: an argv and env for stdio (already wrapped by the sandbox; `named`: the
    variables the server's `env` names), or an expanded URL and headers for HTTP."""

    argv: gate.Confined = field(default_factory=gate.Confined)
    env: dict[str, str] = field(default_factory=dict)
    named: tuple[str, ...] = ()
    cwd: Path | None = None
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RemoteTool:
    name: str
    description: str
    input_schema: dict[str, object]


@dataclass
class CallOutcome:
    text: str = ""
    is_error: bool = False
    error: str = ""  # set when the call did not get a result (timeout, dead server, cancelled)
    crashed: bool = False  # this call found the server gone
    restarted: bool = False  # the server had crashed and was started again for this call


class McpConnection:
    def __init__(
        self, spec: McpServerSpec, launch: Launch, loop: asyncio.AbstractEventLoop, log: Path
    ) -> None:
        self.spec, self.launch, self.loop, self.log = spec, launch, loop, log
        self.tools: list[RemoteTool] = []
        self.dead = ""  # why the server cannot be used: failed to start, crashed, stopped
        self.crashed = False  # it ran, then went away: the next call may start it again
        self.restarts = 0
        self._session: Any = None
        self._stop: asyncio.Event | None = None
        self._ready: concurrent.futures.Future[list[RemoteTool]] = concurrent.futures.Future()
        self._life: concurrent.futures.Future[None] | None = None
        self._lock = threading.Lock()
        self._ended = threading.Event()  # _serve has returned: the transport (and the process) is gone

    # ── lifetime ──────────────────────────────────────────────────────────────────────────────────
    def start(self) -> concurrent.futures.Future[list[RemoteTool]]:
        self._life = asyncio.run_coroutine_threadsafe(self._serve(), self.loop)
        return self._ready

    def wait_started(self, deadline: float, cancel: threading.Event) -> bool:
        """True when the tools are listed by `deadline` (time.monotonic); otherwise `dead` says why.
        A set `cancel` (ctrl-c) stops waiting at once."""
        while True:
            try:
                wait = min(POLL_SECS, max(0.0, deadline - time.monotonic()))
                self.tools = self._ready.result(timeout=wait)
                return True
            except concurrent.futures.TimeoutError:
                if cancel.is_set() or time.monotonic() >= deadline:
                    why = "the run is stopping" if cancel.is_set() else "no answer"
                    self._mark_dead(f"did not start within {self.spec.startup_timeout_secs:g} s ({why})")
                    self.stop()
                    return False
            except Exception as e:
                self._mark_dead(f"failed to start: {_describe(e)}")
                return False

    async def _serve(self) -> None:
        # This life's own signals: a restart replaces the attributes while an old life may still end.
        ready, ended = self._ready, self._ended
        stop = self._stop = asyncio.Event()
        try:
            await self._run(ready, stop)
        finally:
            ended.set()

    async def _run(self, ready: concurrent.futures.Future[list[RemoteTool]], stop: asyncio.Event) -> None:
        try:
            async with AsyncExitStack() as stack:
                session = self._session = await self._connect(stack)
                await session.initialize()
                tools = await _list_tools(session)
                if not ready.done():
                    ready.set_result(tools)
                await stop.wait()
        except BaseException as e:
            if not ready.done():
                ready.set_exception(e if isinstance(e, Exception) else RuntimeError(repr(e)))
            elif not stop.is_set():  # the connection broke between calls
                self._mark_dead(f"the connection failed: {_describe(e)}{self.stderr_tail()}", crashed=True)
            if not isinstance(e, Exception | asyncio.CancelledError):
                raise

    async def _connect(self, stack: AsyncExitStack) -> Any:
        from mcp import ClientSession

        if self.launch.url:
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            client = httpx2.AsyncClient(
                headers=self.launch.headers, timeout=httpx2.Timeout(30, read=300), follow_redirects=False
            )
            await stack.enter_async_context(client)
            read, write = await stack.enter_async_context(
                streamable_http_client(self.launch.url, http_client=client)
            )
        else:
            errlog = stack.enter_context(open(self.log, "a", encoding="utf-8", errors="replace"))
            how = self.launch
            server = gate.stdio_server(
                gate.MCP_SERVER, how.argv, env=how.env, cwd=how.cwd, errlog=errlog, named=how.named
            )
            read, write = await stack.enter_async_context(server)
        return await stack.enter_async_context(ClientSession(read, write))

    def stop(self) -> None:
        """Ask the connection to end (the SDK stops a stdio server's whole process group)."""
        if self._stop is not None and self._ready.done():
            self.loop.call_soon_threadsafe(self._stop.set)
        elif self._life is not None:
            self._life.cancel()  # still starting: cancel the task; the SDK's shielded shutdown still runs

    def wait_stopped(self, deadline: float) -> bool:
        """Wait for the connection to be torn down (a cancelled future says nothing about that)."""
        if self._life is None:
            return True
        if not self._ended.wait(max(0.0, deadline - time.monotonic())):
            self._life.cancel()
            return False
        return True

    # ── calls ─────────────────────────────────────────────────────────────────────────────────────
    def call(
        self, tool: str, arguments: dict[str, object], timeout: float, cancel: threading.Event
    ) -> CallOutcome:
        restarted = bool(self.dead) and self._revive(cancel)
        if self.dead:
            return CallOutcome(error=f"MCP server '{self.spec.name}' is not running: {self.dead}")
        outcome = self._call(tool, arguments, timeout, cancel)
        outcome.restarted = restarted
        return outcome

    def _revive(self, cancel: threading.Event) -> bool:
        """Start a crashed server again, at most MAX_RESTARTS times a run; True when it is back."""
        if not self.crashed or self.restarts >= MAX_RESTARTS:
            return False
        self.restarts += 1
        self.stop()
        self.wait_stopped(time.monotonic() + STOP_SECS)
        with self._lock:
            self.dead, self.crashed, self._session, self._stop = "", False, None, None
        self._ready, self._ended = concurrent.futures.Future(), threading.Event()
        self.start()
        return self.wait_started(time.monotonic() + self.spec.startup_timeout_secs, cancel)

    def _call(
        self, tool: str, arguments: dict[str, object], timeout: float, cancel: threading.Event
    ) -> CallOutcome:
        future = asyncio.run_coroutine_threadsafe(self._session.call_tool(tool, arguments), self.loop)
        deadline = time.monotonic() + timeout
        while True:
            try:
                result = future.result(timeout=min(POLL_SECS, max(0.0, deadline - time.monotonic())))
                return _outcome(result)
            except concurrent.futures.TimeoutError:
                if cancel.is_set():
                    future.cancel()
                    return CallOutcome(error="cancelled: the run is stopping")
                if time.monotonic() >= deadline:
                    future.cancel()
                    return CallOutcome(
                        error=f"no answer from MCP server '{self.spec.name}' within {timeout:g} s "
                        f"(timeout_secs); the call was cancelled"
                    )
            except Exception as e:
                return self._failed(e)

    def _failed(self, e: Exception) -> CallOutcome:
        text = _describe(e)
        if "Connection closed" in text or "ClosedResource" in text or "BrokenResource" in text:
            why = "it exited (crashed or was killed)" + self.stderr_tail()
            self._mark_dead(why, crashed=True)
            return CallOutcome(error=f"MCP server '{self.spec.name}' is gone: {why}", crashed=True)
        return CallOutcome(error=f"the call failed: {text}")

    def _mark_dead(self, why: str, crashed: bool = False) -> None:
        with self._lock:
            self.dead = self.dead or why
            self.crashed = self.crashed or crashed

    def stderr_tail(self, lines: int = 3) -> str:
        if self.launch.url:
            return ""
        try:
            tail = self.log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-lines:]
        except OSError:
            return ""
        return "; its last stderr lines: " + " | ".join(t.strip()[:200] for t in tail) if tail else ""


async def _list_tools(session: Any) -> list[RemoteTool]:
    found: list[RemoteTool] = []
    cursor = None
    while True:
        from mcp.types import PaginatedRequestParams

        result = await session.list_tools(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
        found += [RemoteTool(t.name, t.description or "", dict(t.input_schema or {})) for t in result.tools]
        cursor = result.next_cursor
        if not cursor or len(found) > 1000:
            return found


def _outcome(result: Any) -> CallOutcome:
    """The result's content as text: text blocks as they are, anything else named, structured content
    as JSON when there is no text."""
    import json

    parts = []
    for block in result.content or []:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind in ("image", "audio"):
            parts.append(
                f"[{kind} {getattr(block, 'mime_type', '')}, {len(getattr(block, 'data', ''))} base64 chars]"
            )
        elif kind == "resource_link":
            parts.append(f"[resource {getattr(block, 'uri', '')}]")
        elif kind == "resource":
            res = block.resource
            parts.append(getattr(res, "text", None) or f"[resource {getattr(res, 'uri', '')}]")
        else:
            parts.append(f"[{kind or 'unknown'} content]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False, indent=1))
    return CallOutcome(text="\n".join(parts), is_error=bool(result.is_error))


def _describe(e: BaseException) -> str:
    """One line for an exception, looking inside exception groups (anyio task groups raise them)."""
    while isinstance(e, BaseExceptionGroup) and e.exceptions:
        e = e.exceptions[0]
    text = str(e).strip().splitlines()[0] if str(e).strip() else ""
    return f"{type(e).__name__}: {text}" if text else type(e).__name__
