"""The loopback HTTP server: `FakeAnthropic`, serving a script of replies and errors on 127.0.0.1.

Routes: `POST /v1/messages` (SSE when `stream: true`, else JSON), `POST /v1/messages/count_tokens`,
`GET /v1/models/{id}`. Before a scripted item is consumed, a request is checked as the API would:
at most 4 cache breakpoints, every returned thinking block still bound to its prefix, and the prompt
within the model's window ("prompt is too long: N tokens > M maximum") — such a 400 consumes nothing.
A request asking for server-side compaction is compacted as the API would (`compaction`).
"""

from __future__ import annotations

import hashlib
import json
import ssl
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from openbot.testing.fakeapi import compaction, wire
from openbot.testing.fakeapi.script import HttpError, Reply


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, object]
    raw: bytes
    received: float = 0.0  # time.monotonic() when the whole request had arrived
    answered: float = 0.0  # ... when the last byte of the answer was written (0: none was)


@dataclass
class FakeAnthropic:
    items: list[Reply | HttpError] = field(default_factory=list)
    chunk_chars: int = 6  # size of text/JSON fragments in deltas
    window: int | None = None  # max_input_tokens for every model (default: the catalogue's, else 1M)
    models: dict[str, dict[str, Any]] = field(default_factory=lambda: dict(wire.MODELS))
    # Answers a request before the script does when it returns an item (e.g. a summary request).
    respond: Callable[[dict[str, object]], Reply | HttpError | None] | None = None
    requests: list[Recorded] = field(default_factory=list)
    overcalled: bool = False
    cache: set[str] = field(default_factory=set)
    # The API sends non-ASCII raw (U+2028 in a JSON string included); True escapes it as \\uXXXX.
    ascii_only: bool = False
    output_counts: bool = False  # True: the window must hold the prompt and `max_tokens` (a 400 otherwise)
    tls: ssl.SSLContext | None = None  # a server context: https://localhost:<port> instead of http

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
    def bodies(self) -> list[dict[str, object]]:
        """Bodies of the Messages calls (count_tokens and Models API calls excluded)."""
        return [r.body for r in self.requests if r.path.split("?")[0] == "/v1/messages"]

    @property
    def base_url(self) -> str:
        assert self._server is not None, "use FakeAnthropic as a context manager"
        host, port = self._server.server_address[:2]
        return f"https://localhost:{port}" if self.tls else f"http://{host!s}:{port}"

    def assert_done(self) -> None:
        assert not self.overcalled, f"called {len(self.requests)} times, more than scripted"
        assert not self._queue, f"{len(self._queue)} scripted items were never requested"

    def __enter__(self) -> FakeAnthropic:
        fake = self

        class Handler(_Handler):
            api = fake

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        if self.tls is not None:
            self._server.socket = self.tls.wrap_socket(self._server.socket, server_side=True)
        self._server.daemon_threads = True
        self._server.block_on_close = False
        threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def window_of(self, model: str) -> int:
        entry = self.models.get(model) or {}
        return self.window or int(entry.get("max_input_tokens") or wire.DEFAULT_WINDOW)

    def simulate_usage(self, body: dict[str, object]) -> dict[str, Any]:
        """Input-side usage from the prompt-cache simulation; records this request's marked prefixes.

        A request's longest marked prefix seen before is read from the cache, the rest of its last marked
        prefix is written (reported as 1-hour writes when any marker asks for `ttl: "1h"`), the unmarked
        tail is plain input."""
        h = hashlib.sha256(str(body.get("model", "")).encode())
        marked: list[tuple[str, int]] = []  # (hash, chars) of each prefix ending at a breakpoint
        chars = 0
        for text, is_marked in wire.cache_segments(body):
            h.update(text.encode() + b"\n")
            chars += len(text) + 1
            if is_marked:
                marked.append((h.copy().hexdigest(), chars))
        with self._lock:
            hit = max((c for digest, c in marked if digest in self.cache), default=0)
            self.cache.update(digest for digest, _ in marked)
        last = marked[-1][1] if marked else 0
        written = wire.tokens(last) - wire.tokens(hit)
        one_hour = '"ttl":"1h"' in wire.canon(body).replace(" ", "")
        return {
            "input_tokens": wire.tokens(chars) - wire.tokens(last),
            "cache_creation_input_tokens": written,
            "cache_read_input_tokens": wire.tokens(hit),
            "cache_creation": {
                "ephemeral_5m_input_tokens": 0 if one_hour else written,
                "ephemeral_1h_input_tokens": written if one_hour else 0,
            },
        }

    def next_item(self) -> Reply | HttpError | None:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
            self.overcalled = True
            return None


class _Handler(BaseHTTPRequestHandler):
    api: FakeAnthropic
    protocol_version = "HTTP/1.1"  # chunked bodies, so a cut connection is a protocol error
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self.api.requests.append(Recorded(self.path, dict(self.headers.items()), {}, b""))
        self.close_connection = True
        path = self.path.split("?")[0]
        model_id = path.removeprefix("/v1/models/")
        entry = self.api.models.get(model_id) if path.startswith("/v1/models/") else None
        if entry is None:
            return self._error(HttpError(404, "not_found_error", f"model: {model_id}", {}))
        self._json(200, wire.model_info(model_id, entry))

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        received = time.monotonic()  # benchmarks: openbot's own time is between an answer and a request
        body = json.loads(raw or b"{}")
        recorded = Recorded(self.path, dict(self.headers.items()), body, raw, received)
        self.api.requests.append(recorded)
        self.close_connection = True
        try:
            self._answer(body)
        finally:
            recorded.answered = time.monotonic()

    def _answer(self, body: dict[str, Any]) -> None:
        path = self.path.split("?")[0]
        if path == "/v1/messages/count_tokens":
            return self._json(200, {"input_tokens": wire.prompt_tokens(compaction.live(body))})
        if path != "/v1/messages":
            return self._error(HttpError(404, "not_found_error", f"FakeAnthropic: no route {self.path}", {}))
        refused = compaction.missing_beta(body, dict(self.headers.items())) or self._invalid(body)
        if refused:
            return self._error(HttpError(400, "invalid_request_error", refused, {"x-should-retry": "false"}))
        item = self.api.respond(body) if self.api.respond is not None else None
        item = item or self.api.next_item()
        if item is None:
            msg = f"FakeAnthropic: request {len(self.api.requests)} is more than the script holds"
            return self._error(HttpError(500, "api_error", msg, {"x-should-retry": "false"}))
        if isinstance(item, HttpError):
            return self._error(item)
        usage = self.api.simulate_usage(compaction.live(body))
        usage["output_tokens"] = max(1, wire.tokens(len(wire.canon(wire.full_content(item, body)))))
        usage.update(item.usage or {})
        item, usage = compaction.apply(item, body, usage)
        if body.get("stream"):
            self._stream(item, body, usage)
        else:
            self._json(200, wire.message(item, body, usage))

    def _invalid(self, body: dict[str, Any]) -> str:
        """Why the API would reject this request with a 400 (checked in the API's order), or ""."""
        n = wire.count_breakpoints(body)
        if n > wire.MAX_BREAKPOINTS:
            return (
                f"A maximum of {wire.MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {n}."
            )
        if wire.drop_block(body) and wire.BINDING_BETA not in str(self.headers.get("anthropic-beta", "")):
            return f"thinking.block_binding: requires the beta header anthropic-beta: {wire.BINDING_BETA}"
        bad = ("" if wire.drop_block(body) else wire.bad_signature(body)) or wire.foreign_block(body)
        if bad:
            return bad
        size = wire.prompt_tokens(compaction.live(body))
        window = self.api.window_of(str(body.get("model", "")))
        if size > window:
            return f"prompt is too long: {size} tokens > {window} maximum"
        asked = int(body.get("max_tokens") or 0)
        if self.api.output_counts and size + asked > window:
            return (
                f"input length and `max_tokens` exceed context limit: {size} + {asked} > {window}, "
                "decrease input length or `max_tokens` and try again"
            )
        return ""

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

    def _error(self, err: HttpError) -> None:
        body = {"type": "error", "error": {"type": err.type, "message": err.message}}
        self._json(err.status, body, err.headers)

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _pings(self, item: Reply) -> None:
        end = time.monotonic() + item.stall_secs
        while time.monotonic() < end:
            self._chunk(b'event: ping\ndata: {"type": "ping"}\n\n')
            time.sleep(item.ping_every)

    def _stream(self, item: Reply, body: dict[str, object], usage: dict[str, Any]) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("connection", "close")
        self.send_header("request-id", f"req_fake_{len(self.api.requests)}")
        self.end_headers()
        events = wire.sse_events(item, body, usage, self.api.chunk_chars)
        if item.fail:
            events = events[: item.fail_after + 1]  # message_start + `fail_after` events
        try:
            for name, data in events:
                frame = json.dumps(data, ensure_ascii=self.api.ascii_only)
                self._chunk(f"event: {name}\ndata: {frame}\n\n".encode())
            if item.fail == "error_event":
                err = {
                    "type": "error",
                    "error": {"type": item.error_type, "message": f"fake {item.error_type}"},
                }
                self._chunk(f"event: error\ndata: {json.dumps(err)}\n\n".encode())
            elif item.fail == "stall":
                time.sleep(item.stall_secs)
            elif item.fail == "pings":
                self._pings(item)
            if item.fail in ("cut", "stall", "pings"):
                return  # no terminating chunk: the client sees an incomplete body
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a read timeout, a budget): nothing left to tell it
