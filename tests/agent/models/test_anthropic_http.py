"""openbot's own Messages API client against the SDK it replaces: the same bytes from a loopback server,
split at awkward places, must give the same final message through `anthropic_http` + `anthropic_wire`
as through the SDK's `MessageStream`, and both must send the same request line and headers."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from openbot.agent.models import sse
from openbot.agent.models.anthropic.http import ApiError, BrokenStream, Connection
from openbot.agent.models.anthropic.wire import Accumulator, without_nones
from openbot.agent.models.sse import frames as sse_frames

KEY = "sk-ant-test-0123456789"


def frames(*events: dict[str, Any]) -> str:
    """An SSE body, shaped as the SDK's own streaming fixtures are (a ping after the first block start)."""
    out = []
    for n, event in enumerate(events):
        out.append(f"event: {event['type']}\ndata: {json.dumps(event, separators=(',', ':'))}\n\n")
        if n == 1:
            out.append('event: ping\ndata: {"type": "ping"}\n\n')
    return "".join(out)


def start(usage: dict[str, Any] | None = None, **message: Any) -> dict[str, Any]:
    body = {"id": "msg_01Test", "type": "message", "role": "assistant", "model": "claude-sonnet-5-5"}
    body |= {"content": [], "stop_reason": None, "stop_sequence": None}
    body["usage"] = usage or {"input_tokens": 377, "cache_creation_input_tokens": 0, "output_tokens": 1}
    return {"type": "message_start", "message": body | message}


def block(index: int, content_block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": content_block}


def delta(index: int, **d: Any) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": d}


def stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def end(stop_reason: str, usage: dict[str, Any] | None = None, **extra: Any) -> list[dict[str, Any]]:
    d = {"stop_reason": stop_reason, "stop_sequence": None} | extra.pop("delta", {})
    return [
        {"type": "message_delta", "delta": d, "usage": usage or {"output_tokens": 65}, **extra},
        {"type": "message_stop"},
    ]


TOOL_USE = frames(
    start(),
    block(0, {"type": "text", "text": ""}),
    delta(0, type="text_delta", text="I'll look "),
    delta(0, type="text_delta", text="at the tests — ünïcode too."),
    stop(0),
    block(
        1, {"type": "tool_use", "id": "toolu_01A", "name": "shell", "caller": {"type": "direct"}, "input": {}}
    ),
    delta(1, type="input_json_delta", partial_json=""),
    delta(1, type="input_json_delta", partial_json='{"comma'),
    delta(1, type="input_json_delta", partial_json='nd": "pytest -q'),
    delta(1, type="input_json_delta", partial_json=' tests/"}'),
    stop(1),
    *end("tool_use"),
)
THINKING = frames(
    start(),
    block(0, {"type": "thinking", "thinking": "", "signature": ""}),
    delta(0, type="thinking_delta", thinking="The failing test "),
    delta(0, type="thinking_delta", thinking="is in test_app.py."),
    delta(0, type="signature_delta", signature="EqQBCgIYAhIM1gbcDa9GJwZA2b3h"),
    stop(0),
    block(1, {"type": "text", "text": "", "citations": None}),
    delta(1, type="text_delta", text="See the docs."),
    delta(
        1,
        type="citations_delta",
        citation={
            "type": "char_location",
            "cited_text": "x",
            "document_index": 0,
            "document_title": None,
            "start_char_index": 0,
            "end_char_index": 1,
        },
    ),
    stop(1),
    block(2, {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"}),
    stop(2),
    *end("end_turn"),
)
ITERATIONS = [
    {"type": "compaction", "input_tokens": 180_000, "output_tokens": 2_100},
    {"type": "message", "input_tokens": 2_300, "output_tokens": 40, "cache_read_input_tokens": 0},
]
COMPACTION = frames(
    start({"input_tokens": 30, "output_tokens": 1}),
    block(0, {"type": "compaction", "content": None, "encrypted_content": None}),
    delta(
        0, type="compaction_delta", content="Earlier work summarised.", encrypted_content="EpwBCioIDx_opaque"
    ),
    stop(0),
    block(1, {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search", "input": {}}),
    delta(1, type="input_json_delta", partial_json='{"query": '),
    delta(1, type="input_json_delta", partial_json='"pytest fixtures"}'),
    stop(1),
    block(2, {"type": "text", "text": ""}),
    delta(2, type="text_delta", text="Done."),
    stop(2),
    *end(
        "end_turn",
        {"output_tokens": 40, "input_tokens": 2_300, "cache_read_input_tokens": 7, "iterations": ITERATIONS},
        context_management={"applied_edits": []},
    ),
)
REFUSAL = frames(
    start(stop_details={"type": "refusal"}),
    block(0, {"type": "text", "text": ""}),
    delta(0, type="text_delta", text="I can't help with that."),
    stop(0),
    *end("refusal", delta={"stop_details": {"type": "refusal", "category": "cyber", "explanation": "no"}}),
)
# U+2028, U+2029 and U+0085 raw inside JSON strings, as any encoder may leave them: lines end at CR/LF only.
SEPARATORS = (
    frames(
        start(),
        block(0, {"type": "text", "text": ""}),
        delta(0, type="text_delta", text="line\u2028sep para\u2029sep next\u0085line"),
        stop(0),
        block(1, {"type": "tool_use", "id": "toolu_01B", "name": "shell", "input": {}}),
        delta(1, type="input_json_delta", partial_json='{"command": "echo \u2028"}'),
        stop(1),
        *end("tool_use"),
    )
    .replace("\\u2028", "\u2028")
    .replace("\\u2029", "\u2029")
    .replace("\\u0085", "\u0085")
)
STREAMS = {
    "tool_use": TOOL_USE,
    "thinking": THINKING,
    "compaction": COMPACTION,
    "refusal": REFUSAL,
    "separators": SEPARATORS,
}


class Served:
    """A loopback server that answers every POST with `body`, `chunk` bytes at a time, and records what
    each client sent."""

    def __init__(self, body: str, chunk: int, newline: str = "\n", status: int = 200) -> None:
        self.payload = body.replace("\n", newline).encode()
        self.chunk, self.status = chunk, status
        self.seen: list[tuple[str, dict[str, str], dict[str, Any]]] = []
        served = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a: Any) -> None:
                pass

            def setup(self) -> None:
                super().setup()  # small chunks go out at once, not after the client's delayed ACK
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers["content-length"]))
                served.seen.append(
                    (self.path, {k.lower(): v for k, v in self.headers.items()}, json.loads(raw))
                )
                self.send_response(served.status)
                kind = "text/event-stream" if served.status == 200 else "application/json"
                self.send_header("content-type", kind)
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                data = served.payload
                for i in range(0, len(data), served.chunk):
                    piece = data[i : i + served.chunk]
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


PARAMS = {"model": "claude-sonnet-5-5", "max_tokens": 1024, "messages": [{"role": "user", "content": "hi"}]}


def by_sdk(url: str, betas: list[str]) -> dict[str, Any]:
    import anthropic

    client = anthropic.Anthropic(api_key=KEY, base_url=url, max_retries=0)
    api: Any = client.beta.messages if betas else client.messages
    kwargs: dict[str, Any] = {"betas": betas} if betas else {}
    with api.stream(**PARAMS, **kwargs) as stream:
        for _ in stream:
            pass
        message = stream.get_final_message()
    return dict(message.model_dump(mode="json", exclude_none=True))


def by_openbot(url: str, betas: list[str]) -> dict[str, Any]:
    reply = Accumulator()
    for event in Connection(KEY, url).stream(
        "/v1/messages", {**PARAMS, "stream": True}, timeout=10, betas=betas
    ):
        reply.add(event)
    assert reply.message is not None
    message, bad = reply.finish(truncated=False)
    assert bad == ""
    return dict(without_nones(message))


@pytest.mark.parametrize("name", sorted(STREAMS))
@pytest.mark.parametrize(("chunk", "newline"), [(5, "\n"), (64, "\r\n"), (100_000, "\n")])
def test_the_same_final_message_and_request_as_the_sdk(name: str, chunk: int, newline: str) -> None:
    betas = ["compact-2026-01-12"] if name == "compaction" else []
    served = Served(STREAMS[name], chunk, newline)
    try:
        theirs, ours = by_sdk(served.url, betas), by_openbot(served.url, betas)
    finally:
        served.close()
    assert ours == theirs
    (sdk_path, sdk_headers, sdk_body), (path, headers, body) = served.seen
    assert path == sdk_path and body == {**sdk_body, "stream": True}
    for header in ("authorization", "anthropic-version", "anthropic-beta", "content-type", "accept"):
        assert headers.get(header) == sdk_headers.get(header), header
    assert headers["authorization"] == f"Bearer {KEY}"


def test_an_error_status_and_an_error_frame_are_api_errors() -> None:
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    served = Served(json.dumps(body), 7, status=529)
    try:
        with pytest.raises(ApiError) as info:
            list(Connection(KEY, served.url).stream("/v1/messages", {}, timeout=10, betas=[]))
    finally:
        served.close()
    assert (info.value.status_code, info.value.type, info.value.message) == (
        529,
        "overloaded_error",
        "Overloaded",
    )

    stream = (
        frames(start(), block(0, {"type": "text", "text": ""}))
        + f"event: error\ndata: {json.dumps(body)}\n\n"
    )
    served = Served(stream, 9)
    try:
        with pytest.raises(ApiError) as info:
            list(Connection(KEY, served.url).stream("/v1/messages", {}, timeout=10, betas=[]))
    finally:
        served.close()
    assert (info.value.status_code, info.value.type) == (200, "overloaded_error")


def test_a_frame_that_is_not_json_is_a_broken_stream() -> None:
    served = Served(frames(start()) + 'event: content_block_start\ndata: {"type": "conte\n\n', 11)
    try:
        with pytest.raises(BrokenStream, match="not JSON"):
            list(Connection(KEY, served.url).stream("/v1/messages", {}, timeout=10, betas=[]))
    finally:
        served.close()


def lines(text: str) -> Iterator[str]:
    yield from text.split("\n")


def test_sse_lines_end_at_cr_lf_and_crlf_only_however_the_bytes_are_chunked() -> None:
    data = "a\u2028b\r\nc\rd\n\ne\u0085f\u2029".encode()
    for size in range(1, len(data) + 1):
        chunks = [data[i : i + size] for i in range(0, len(data), size)]
        assert list(sse.lines(chunks)) == ["a\u2028b", "c", "d", "", "e\u0085f\u2029"], size


def test_sse_frames_as_the_spec_reads_them() -> None:
    text = ': a comment\nevent: a\ndata: one\ndata:two\n\nid: 7\ndata: {}\n\nevent: cut\ndata: {"half'
    assert list(sse_frames(lines(text))) == [
        (":", "a comment"),
        ("a", "one\ntwo"),
        (None, "{}"),
    ]  # unended: dropped
