"""A loopback server speaking the Anthropic Messages API wire protocol, for tests with the real SDK.

    with FakeAnthropic([reply("hi"), http_error(529), reply("ok", tool_calls=[...])]) as api:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)   # no /v1: the SDK adds it
        ...
        assert api.requests[0].body["model"] == ...
        api.assert_done()

Each `POST /v1/messages` consumes the next scripted item: a reply (streamed as SSE when the request
says `stream: true`, else one JSON message), an HTTP error, or a reply that fails mid-stream (an
`event: error` frame, a cut connection, a stall, or a clean end without `message_stop`). A request
beyond the script gets HTTP 500 with `x-should-retry: false` and sets `overcalled`.

Usage is scripted or simulated: the server keeps the hashes of every prefix that ended at a
`cache_control` breakpoint (tools, then system, then messages, each block serialized canonically with
its marker removed, as the API's cache ignores where the marker sits). A request's longest marked
prefix seen before is reported as `cache_read_input_tokens`, the rest of its last marked prefix as
`cache_creation_input_tokens`, the unmarked tail as `input_tokens`; tokens are characters / 4.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MAX_BREAKPOINTS = 4
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


@dataclass
class Reply:
    """One assistant message; `fail` makes it break after `fail_after` stream events."""

    content: list[dict[str, Any]]
    stop_reason: str = ""
    usage: dict[str, int] | None = None
    fail: str = ""  # "" | error_event | cut | stall | truncate
    fail_after: int = 3
    error_type: str = "overloaded_error"
    stall_secs: float = 5.0


@dataclass
class HttpError:
    status: int
    type: str
    message: str


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    raw: bytes


def reply(
    text: str = "",
    tool_calls: list[dict[str, Any]] | None = None,
    *,
    usage: dict[str, int] | None = None,
    stop_reason: str = "",
) -> Reply:
    """A reply of a text block and tool_use blocks (`{"name", "input", "id"?}`)."""
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    for n, call in enumerate(tool_calls or []):
        blocks.append(
            {
                "type": "tool_use",
                "id": call.get("id", f"toolu_fake_{n}"),
                "name": call["name"],
                "input": call.get("input", {}),
            }
        )
    return Reply(blocks, stop_reason, usage)


def _doomed_partial() -> list[dict[str, Any]]:
    # A half-sent tool call: a client that ran it before the reply was complete would be wrong.
    return reply(
        "This partial reply must be discarded.",
        [{"name": "shell", "input": {"command": "echo partial"}, "id": "toolu_partial"}],
    ).content


def http_error(status: int, type: str = "", message: str = "") -> HttpError:
    t = type or ERROR_TYPES.get(status, "api_error")
    return HttpError(status, t, message or f"fake {t}")


def error_event(type: str = "overloaded_error", after: int = 3) -> Reply:
    """An `event: error` frame after `after` stream events of a partial reply."""
    return Reply(_doomed_partial(), fail="error_event", fail_after=after, error_type=type)


def cut(after: int = 3) -> Reply:
    """The connection closes mid-body after `after` stream events."""
    return Reply(_doomed_partial(), fail="cut", fail_after=after)


def stall(secs: float = 5.0, after: int = 3) -> Reply:
    """The server goes silent for `secs` after `after` stream events, then closes."""
    return Reply(_doomed_partial(), fail="stall", fail_after=after, stall_secs=secs)


def truncated(after: int = 3) -> Reply:
    """The body ends cleanly after `after` events, without `message_delta`/`message_stop`."""
    return Reply(_doomed_partial(), fail="truncate", fail_after=after)


def _canon(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _strip_marker(block: Any) -> Any:
    return {k: v for k, v in block.items() if k != "cache_control"} if isinstance(block, dict) else block


def cache_segments(body: dict[str, Any]) -> list[tuple[str, bool]]:
    """The request's cacheable blocks in the API's order, as (canonical text, has cache_control)."""
    segs: list[tuple[str, bool]] = []
    for tool in body.get("tools") or []:
        segs.append((_canon(["tool", _strip_marker(tool)]), "cache_control" in tool))
    system = body.get("system")
    for block in [{"type": "text", "text": system}] if isinstance(system, str) else system or []:
        segs.append((_canon(["system", _strip_marker(block)]), "cache_control" in block))
    for i, msg in enumerate(body.get("messages") or []):
        content = msg.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        for block in blocks:
            segs.append(
                (_canon(["message", i, msg.get("role"), _strip_marker(block)]), "cache_control" in block)
            )
    if body.get("cache_control") and segs:  # the top-level kwarg marks the last cacheable block
        segs[-1] = (segs[-1][0], True)
    return segs


def count_breakpoints(body: dict[str, Any]) -> int:
    """Explicit `cache_control` blocks, plus one for the top-level kwarg."""
    explicit = cache_segments({**body, "cache_control": None})
    return sum(marked for _, marked in explicit) + (1 if body.get("cache_control") else 0)


def _tokens(chars: int) -> int:
    return chars // 4


@dataclass
class FakeAnthropic:
    items: list[Reply | HttpError] = field(default_factory=list)
    chunk_chars: int = 6  # size of text/JSON fragments in deltas
    requests: list[Recorded] = field(default_factory=list)
    overcalled: bool = False
    cache: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self._queue: deque[Reply | HttpError] = deque(self.items)
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    def add(self, *items: Reply | HttpError) -> None:
        with self._lock:
            self._queue.extend(items)

    @property
    def remaining(self) -> int:
        return len(self._queue)

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [r.body for r in self.requests]

    @property
    def base_url(self) -> str:
        assert self._server is not None, "use FakeAnthropic as a context manager"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def assert_done(self) -> None:
        assert not self.overcalled, f"called {len(self.requests)} times, more than scripted"
        assert not self._queue, f"{len(self._queue)} scripted items were never requested"

    def __enter__(self) -> FakeAnthropic:
        fake = self

        class Handler(_Handler):
            api = fake

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._server.block_on_close = False
        threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def simulate_usage(self, body: dict[str, Any]) -> dict[str, int]:
        """Input-side usage from the prompt-cache simulation; records this request's marked prefixes."""
        segs = cache_segments(body)
        model = str(body.get("model", ""))
        h = hashlib.sha256(model.encode())
        marked: list[tuple[str, int]] = []  # (hash, chars) of each prefix ending at a breakpoint
        chars = 0
        for text, is_marked in segs:
            h.update(text.encode() + b"\n")
            chars += len(text) + 1
            if is_marked:
                marked.append((h.copy().hexdigest(), chars))
        with self._lock:
            hit = max((c for digest, c in marked if digest in self.cache), default=0)
            self.cache.update(digest for digest, _ in marked)
        last = marked[-1][1] if marked else 0
        return {
            "input_tokens": _tokens(chars) - _tokens(last),
            "cache_creation_input_tokens": _tokens(last) - _tokens(hit),
            "cache_read_input_tokens": _tokens(hit),
        }

    def _next(self) -> Reply | HttpError | None:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
            self.overcalled = True
            return None


class _Handler(BaseHTTPRequestHandler):
    api: FakeAnthropic
    protocol_version = "HTTP/1.1"  # chunked bodies, so a cut connection is a protocol error

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        body = json.loads(raw or b"{}")
        self.api.requests.append(Recorded(self.path, dict(self.headers.items()), body, raw))
        self.close_connection = True
        if self.path.split("?")[0] != "/v1/messages":
            return self._error(HttpError(404, "not_found_error", f"FakeAnthropic: no route {self.path}"))
        n = count_breakpoints(body)
        if n > MAX_BREAKPOINTS:
            msg = f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {n}."
            return self._error(HttpError(400, "invalid_request_error", msg))
        item = self.api._next()
        if item is None:
            msg = f"FakeAnthropic: request {len(self.api.requests)} is more than the script holds"
            return self._error(HttpError(500, "api_error", msg), retry=False)
        if isinstance(item, HttpError):
            return self._error(item)
        usage = self._usage(item, body)
        if body.get("stream"):
            self._stream(item, body, usage)
        else:
            self._json(200, _message(item, body, usage))

    def _usage(self, item: Reply, body: dict[str, Any]) -> dict[str, int]:
        usage = self.api.simulate_usage(body)
        usage["output_tokens"] = max(1, _tokens(len(_canon(item.content))))
        usage.update(item.usage or {})
        return usage

    def _json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("connection", "close")
        self.send_header("request-id", f"req_fake_{len(self.api.requests)}")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _error(self, err: HttpError, retry: bool = True) -> None:
        headers = {"retry-after-ms": "1"} if retry else {"x-should-retry": "false"}
        self._json(
            err.status, {"type": "error", "error": {"type": err.type, "message": err.message}}, headers
        )

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _stream(self, item: Reply, body: dict[str, Any], usage: dict[str, int]) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("connection", "close")
        self.send_header("request-id", f"req_fake_{len(self.api.requests)}")
        self.end_headers()
        events = _sse_events(item, body, usage, self.api.chunk_chars)
        if item.fail:
            events = events[: item.fail_after + 1]  # message_start + `fail_after` events
        for name, data in events:
            self._chunk(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
        if item.fail == "error_event":
            err = {"type": "error", "error": {"type": item.error_type, "message": f"fake {item.error_type}"}}
            self._chunk(f"event: error\ndata: {json.dumps(err)}\n\n".encode())
        elif item.fail == "stall":
            time.sleep(item.stall_secs)
        if item.fail in ("cut", "stall"):
            return  # no terminating chunk: the client sees an incomplete body
        self.wfile.write(b"0\r\n\r\n")


def _split(s: str, size: int) -> list[str]:
    return [s[i : i + size] for i in range(0, len(s), size)] or [""]


def _stop_reason(item: Reply) -> str:
    return item.stop_reason or (
        "tool_use" if any(b["type"] == "tool_use" for b in item.content) else "end_turn"
    )


def _message(item: Reply, body: dict[str, Any], usage: dict[str, int]) -> dict[str, Any]:
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", ""),
        "content": item.content,
        "stop_reason": _stop_reason(item),
        "stop_sequence": None,
        "usage": usage,
    }


def _sse_events(
    item: Reply, body: dict[str, Any], usage: dict[str, int], size: int
) -> list[tuple[str, dict[str, Any]]]:
    start = {**_message(item, body, {**usage, "output_tokens": 1}), "content": [], "stop_reason": None}
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": start}),
        ("ping", {"type": "ping"}),
    ]
    for i, block in enumerate(item.content):
        if block["type"] == "tool_use":
            opening = {**block, "input": {}}
            deltas = [
                {"type": "input_json_delta", "partial_json": p}
                for p in _split(json.dumps(block["input"]), size)
            ]
        else:
            opening = {**block, "text": ""}
            deltas = [{"type": "text_delta", "text": p} for p in _split(block.get("text", ""), size)]
        events.append(
            ("content_block_start", {"type": "content_block_start", "index": i, "content_block": opening})
        )
        events += [
            ("content_block_delta", {"type": "content_block_delta", "index": i, "delta": d}) for d in deltas
        ]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    delta = {"stop_reason": _stop_reason(item), "stop_sequence": None}
    events.append(("message_delta", {"type": "message_delta", "delta": delta, "usage": usage}))
    events.append(("message_stop", {"type": "message_stop"}))
    return events
