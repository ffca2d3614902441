"""The loopback HTTP server: `FakeOpenAI`, serving a script on 127.0.0.1 in both OpenAI wire protocols.

Routes: `POST /v1/responses` and `POST /v1/chat/completions` (SSE when `stream: true`, else JSON),
`GET /v1/models` and `GET /v1/models/{id}` (the entries of `models`, with any extra fields such as
vLLM's `max_model_len`). Before a scripted item is consumed, a request is checked (`checks`), its model
must be listed, its prompt must fit the model's window (`window`, else the entry's `max_model_len`), and
a model listed with `"tools": False` refuses `tools` as Ollama does — such a 400 consumes nothing.
TCP_NODELAY is on (`disable_nagle_algorithm`), as at a real API edge.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from openbot.testing.fakeopenai import checks, wire_chat, wire_responses
from openbot.testing.fakeopenai.script import HttpError, Reply, no_tools, too_long

Item = Reply | HttpError


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]  # names in lower case
    body: dict[str, object]


@dataclass
class FakeOpenAI:
    items: list[Item] = field(default_factory=list)
    models: dict[str, dict[str, Any]] = field(default_factory=dict)  # id → extra fields of its listing
    chunk_chars: int = 6  # size of text / argument fragments
    window: int | None = None  # tokens (characters / 4) a prompt may have, for every model
    respond: Callable[[dict[str, object]], Item | None] | None = None  # answers before the script does
    requests: list[Recorded] = field(default_factory=list)
    overcalled: bool = False
    send_usage: bool = True  # False: no usage chunk even when asked (as some local servers do)
    ascii_only: bool = False  # servers send non-ASCII raw (U+2028 included); True escapes it

    def __post_init__(self) -> None:
        self._queue: deque[Item] = deque(self.items)
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._prefixes: set[str] = set()
        self.issued: dict[str, str] = {}  # encrypted_content → reasoning item id
        self.reasoning_of: dict[str, str] = {}  # call_id → the encrypted_content of the reasoning before it

    def add(self, *items: Item) -> None:
        with self._lock:
            self._queue.extend(items)

    @property
    def base_url(self) -> str:
        """With /v1, as OPENAI_BASE_URL and `base_url` are written."""
        assert self._server is not None, "use FakeOpenAI as a context manager"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    @property
    def bodies(self) -> list[dict[str, object]]:
        """Bodies of the model calls (listing calls excluded)."""
        return [r.body for r in self.requests if r.path.endswith(("/responses", "/chat/completions"))]

    def assert_done(self) -> None:
        assert not self.overcalled, f"called {len(self.requests)} times, more than scripted"
        assert not self._queue, f"{len(self._queue)} scripted items were never requested"

    def __enter__(self) -> FakeOpenAI:
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

    def next_item(self) -> Item | None:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
            self.overcalled = True
            return None

    def segments(self, body: dict[str, Any]) -> list[str]:
        head = checks.canon([body.get("model"), body.get("instructions"), body.get("tools")])
        return [head, *(checks.canon(i) for i in body.get("input") or body.get("messages") or [])]

    def prompt_tokens(self, body: dict[str, object]) -> int:
        """The fake tokenizer: characters of the canonical request / 4."""
        return sum(len(seg) + 1 for seg in self.segments(body)) // 4

    def simulate_usage(self, body: dict[str, object]) -> tuple[int, int]:
        """(prompt tokens, cached tokens): characters / 4, and the longest prefix of items seen before
        (OpenAI caches prefixes automatically; the 1024-token minimum is not simulated)."""
        h, chars, hit, prefixes = hashlib.sha256(), 0, 0, []
        for seg in self.segments(body):
            h.update(seg.encode() + b"\n")
            chars += len(seg) + 1
            prefixes.append((h.hexdigest(), chars))
        with self._lock:
            hit = max((c for d, c in prefixes if d in self._prefixes), default=0)
            self._prefixes.update(d for d, _ in prefixes)
        return chars // 4, hit // 4

    def window_of(self, model: str) -> int | None:
        entry = self.models.get(model) or {}
        return self.window or entry.get("max_model_len") or entry.get("context_window")

    def remember(self, items: list[dict[str, Any]]) -> None:
        enc = ""
        for item in items:
            if item["type"] == "reasoning":
                enc = item["encrypted_content"] or ""
                if enc:
                    self.issued[enc] = item["id"]
            elif item["type"] == "function_call" and enc:
                self.reasoning_of[item["call_id"]] = enc


class _Handler(BaseHTTPRequestHandler):
    api: FakeOpenAI
    protocol_version = "HTTP/1.1"  # chunked bodies, so a cut connection is a protocol error
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self.api.requests.append(Recorded(self.path, {k.lower(): v for k, v in self.headers.items()}, {}))
        self.close_connection = True
        path = self.path.split("?")[0]
        if path == "/v1/models":
            return self._json(
                200, {"object": "list", "data": [checks.listed(m, e) for m, e in self.api.models.items()]}
            )
        model_id = path.removeprefix("/v1/models/")
        if path.startswith("/v1/models/") and model_id in self.api.models:
            return self._json(200, checks.listed(model_id, self.api.models[model_id]))
        self._error(HttpError(404, "model_not_found", f"The model '{model_id}' does not exist", {}))

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        body = json.loads(raw or b"{}")
        self.api.requests.append(Recorded(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
        self.close_connection = True
        path = self.path.split("?")[0]
        if path not in ("/v1/responses", "/v1/chat/completions"):
            return self._error(HttpError(404, "not_found", f"FakeOpenAI: no route {self.path}", {}))
        refused = self._refusal(body, path)
        if refused is not None:
            return self._error(refused)
        item = self.api.respond(body) if self.api.respond is not None else None
        item = item or self.api.next_item()
        if item is None:
            msg = f"FakeOpenAI: request {len(self.api.requests)} is more than the script holds"
            return self._error(HttpError(500, "server_error", msg, {"x-should-retry": "false"}))
        if isinstance(item, HttpError):
            return self._error(item)
        if path == "/v1/responses":
            self._responses(item, body)
        else:
            self._chat(item, body)

    def _refusal(self, body: dict[str, Any], path: str) -> HttpError | None:
        model = str(body.get("model", ""))
        if model not in self.api.models and f"{model}:latest" in self.api.models:
            model = f"{model}:latest"  # Ollama serves `name` as `name:latest`
        if model not in self.api.models:
            return HttpError(404, "model_not_found", f"The model '{model}' does not exist", {})
        if body.get("tools") and self.api.models[model].get("tools") is False:
            return no_tools(model)
        if path == "/v1/responses":
            problem = checks.responses_problem(body, self.api.issued, self.api.reasoning_of)
        else:
            problem = checks.chat_problem(body)
        if problem:
            return HttpError(400, "invalid_request_error", problem, {"x-should-retry": "false"})
        window = self.api.window_of(model)
        size = self.api.prompt_tokens(body) if window else 0
        if window and size > window:
            return too_long(window, size)
        # vLLM (a model listed with max_model_len) counts the requested output inside the window too.
        asked = int(body.get("max_tokens") or 0) if "max_model_len" in self.api.models[model] else 0
        if window and size + asked > window:
            return too_long(window, size + asked)
        return None

    def _usage(self, item: Reply, body: dict[str, object], out_chars: int) -> tuple[int, int, int]:
        prompt, cached = self.api.simulate_usage(body)
        output = max(1, out_chars // 4)
        if item.usage:
            prompt, output = item.usage.get("input", prompt), item.usage.get("output", output)
            cached = item.usage.get("cached", cached)
        return prompt, output, cached

    def _responses(self, item: Reply, body: dict[str, Any]) -> None:
        n = len(self.api.requests)
        enc = "gAAAAfake" + hashlib.sha256(f"{n}:{item.reasoning}".encode()).hexdigest()[:32]
        asked = "reasoning.encrypted_content" in (body.get("include") or [])
        items = wire_responses.output_items(item, enc if asked else None, n)  # only when asked, as the API
        self.api.remember(items)
        usage = wire_responses.usage(*self._usage(item, body, len(checks.canon(items))))
        events = wire_responses.events(item, body, usage, items, self.api.chunk_chars)
        frames = [f"event: {e['type']}\ndata: {self._dumps(e)}\n\n".encode() for e in events]
        error = {
            "type": "error",
            "code": "server_error",
            "message": "fake server_error mid-stream",
            "param": None,
        }
        self._sse(
            item, frames, f"event: error\ndata: {json.dumps({**error, 'sequence_number': len(frames)})}\n\n"
        )

    def _chat(self, item: Reply, body: dict[str, object]) -> None:
        out_chars = len(item.text) + sum(len(wire_chat.arguments(item, i)) for i in range(len(item.calls)))
        usage = wire_chat.usage(*self._usage(item, body, out_chars))
        if not body.get("stream"):
            return self._json(200, wire_chat.completion(item, body, usage))
        chunks = wire_chat.chunks(item, body, usage, self.api.chunk_chars)
        if not self.api.send_usage:
            chunks = [c for c in chunks if "usage" not in c]
        frames = [f"data: {self._dumps(c)}\n\n".encode() for c in chunks]
        if item.keepalive:
            frames = [f for frame in frames for f in (frame, b": keep-alive\n\n")]
        if not item.fail:
            frames.append(b"data: [DONE]\n\n")
        error = {
            "error": {
                "message": "fake server_error mid-stream",
                "type": "server_error",
                "code": "server_error",
            }
        }
        self._sse(item, frames, f"data: {json.dumps(error)}\n\n")

    def _sse(self, item: Reply, frames: list[bytes], error_frame: str) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("connection", "close")
        self.send_header("x-request-id", f"req_fake_{len(self.api.requests)}")
        self.end_headers()
        if item.fail:
            frames = frames[: item.fail_after + 1]
        try:
            for frame in frames:
                self._chunk(frame)
            if item.fail == "error_event":
                self._chunk(error_frame.encode())
            elif item.fail == "stall":
                time.sleep(item.stall_secs)
            elif item.fail == "pings":  # a dead stream kept alive by comments
                end = time.monotonic() + item.stall_secs
                while time.monotonic() < end:
                    self._chunk(b": keep-alive\n\n")
                    time.sleep(item.ping_every)
            if item.fail in ("cut", "stall", "pings"):
                return  # no terminating chunk: the client sees an incomplete body
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a read timeout, a budget): nothing left to tell it

    def _dumps(self, obj: object) -> str:
        return json.dumps(obj, ensure_ascii=self.api.ascii_only)

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _json(self, status: int, obj: object, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("connection", "close")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _error(self, err: HttpError) -> None:
        body = {"error": {"message": err.message, "type": err.code, "param": None, "code": err.code}}
        self._json(err.status, body, err.headers)
