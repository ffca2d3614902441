"""openbot's Messages API client sends a plain request on the standard library (agent/models/direct.py) and
everything else through httpx2, as before: connections kept alive and a dead idle one never used, https
verified (with `SSL_CERT_FILE` honoured), a redirect followed by httpx2 (no key to another origin), a proxy
in the environment used, and every transport failure one of two errors the backend knows."""

from __future__ import annotations

import json
import shutil
import socket
import ssl
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from openbot.agent.models import direct
from openbot.agent.models.anthropic.http import Connection
from openbot.agent.models.direct import Stalled, TransportFailure
from openbot.testing.fakeapi import FakeAnthropic, reply

KEY = "sk-ant-test-direct-0000"
BODY = {"model": "claude-sonnet-5-5", "max_tokens": 64, "messages": [{"role": "user", "content": "hi"}]}


def streamed(connection: Connection) -> str:
    events = list(connection.stream("/v1/messages", {**BODY, "stream": True}, timeout=30, betas=[]))
    return "".join(e["delta"].get("text", "") for e in events if e.get("type") == "content_block_delta")


class Server:
    """A loopback HTTP/1.1 server: `answer(handler)` answers each request; it counts the TCP connections
    it accepted and records each request (method, target, headers, body)."""

    def __init__(self, answer: Any) -> None:
        self.connections = 0
        self.seen: list[tuple[str, str, dict[str, str], bytes]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: Any) -> None:
                pass

            def setup(self) -> None:
                super().setup()
                server.connections += 1

            def _any(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                headers = {k.lower(): v for k, v in self.headers.items()}
                server.seen.append((self.command, self.path, headers, raw))
                answer(self)

            do_GET = do_POST = _any

        class Http(ThreadingHTTPServer):
            def shutdown_request(self, request: Any) -> None:
                super().shutdown_request(request)
                with server.changed:
                    server.closed += 1
                    server.changed.notify_all()

        self.closed = 0  # connections the server has closed
        self.changed = threading.Condition()
        self.http = Http(("127.0.0.1", 0), Handler)
        self.http.daemon_threads = True
        threading.Thread(target=self.http.serve_forever, args=(0.02,), daemon=True).start()
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}"

    def wait_closed(self, count: int) -> None:
        with self.changed:
            assert self.changed.wait_for(lambda: self.closed >= count, timeout=60)

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.http.shutdown()
        self.http.server_close()


def json_answer(
    handler: BaseHTTPRequestHandler, obj: object = None, close: bool = False, kind: str = "application/json"
) -> None:
    data = json.dumps(obj if obj is not None else {"id": "claude-sonnet-5-5"}, ensure_ascii=False).encode()
    handler.send_response(200)
    handler.send_header("content-type", kind)
    handler.send_header("content-length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)
    handler.wfile.flush()
    if close:  # closes the connection without saying so: as a server does to a keep-alive one left idle
        handler.close_connection = True


@pytest.fixture
def no_httpx2(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(self: Connection) -> None:
        raise AssertionError("a plain request went through httpx2")

    monkeypatch.setattr(Connection, "_httpx2", refused)


def test_calls_reuse_one_kept_alive_connection_without_httpx2(no_httpx2: None) -> None:
    with Server(json_answer) as server:
        connection = Connection(KEY, server.url)
        for _ in range(3):
            assert connection.call("GET", "/v1/models/claude-sonnet-5-5", timeout=10) == {
                "id": "claude-sonnet-5-5"
            }
    assert (server.connections, len(server.seen)) == (1, 3)
    method, target, headers, _ = server.seen[0]
    assert (method, target, headers["authorization"]) == (
        "GET",
        "/v1/models/claude-sonnet-5-5",
        f"Bearer {KEY}",
    )


def test_an_answer_in_a_charset_python_does_not_know_is_read_as_utf_8(no_httpx2: None) -> None:
    answer = {"display_name": "Claude Sonnet 5.5 — “tout neuf”"}
    with Server(
        lambda h: json_answer(h, answer, kind="application/json; charset=x-no-such-charset")
    ) as server:
        assert Connection(KEY, server.url).call("GET", "/v1/models/m", timeout=10) == answer


def test_a_connection_the_server_closed_while_idle_is_never_used(no_httpx2: None) -> None:
    with Server(lambda h: json_answer(h, close=True)) as server:
        connection = Connection(KEY, server.url)
        for n in range(1, 4):  # each call would fail on the closed connection if it were reused
            connection.call("POST", "/v1/messages/count_tokens", {"model": "m"}, timeout=10)
            server.wait_closed(n)  # closed by now, while idle in openbot's pool
    assert (server.connections, len(server.seen)) == (3, 3)  # one request each: nothing sent twice


def test_a_stream_over_plain_http_needs_no_httpx2_and_no_certificates(
    no_httpx2: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(direct, "tls_context", lambda: pytest.fail("a certificate store was loaded"))
    with FakeAnthropic([reply("hello"), reply("again")]) as api:
        connection = Connection(KEY, api.base_url)
        connection.warm()
        assert (streamed(connection), streamed(connection)) == ("hello", "again")


def test_a_redirect_is_followed_by_httpx2_and_the_key_stays_with_its_origin() -> None:
    with FakeAnthropic([reply("moved here")]) as api:

        def moved(handler: BaseHTTPRequestHandler) -> None:
            handler.send_response(307)
            handler.send_header("location", api.base_url + handler.path)
            handler.send_header("content-length", "0")
            handler.end_headers()

        with Server(moved) as server:
            connection = Connection(KEY, server.url)
            assert streamed(connection) == "moved here"
            connection.close()
        [sent] = api.requests
    # sent as a plain request, then again by httpx2, which follows the answer
    assert [(method, json.loads(body)) for method, _, _, body in server.seen] == [
        ("POST", {**BODY, "stream": True})
    ] * 2
    assert sent.body == {**BODY, "stream": True}  # the same POST, sent again where it was sent to
    assert server.seen[1][2]["authorization"] == f"Bearer {KEY}"
    assert "authorization" not in {k.lower() for k in sent.headers}  # another origin: no key, as httpx2 does


def test_a_proxy_named_in_the_environment_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    with Server(json_answer) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        connection = Connection(KEY, "http://api.example.invalid")
        answer = connection.call("GET", "/v1/models/m", timeout=10)
        connection.close()
    assert answer == {"id": "claude-sonnet-5-5"}
    [(method, target, _, _)] = proxy.seen
    assert (method, target) == ("GET", "http://api.example.invalid/v1/models/m")  # as a proxy is asked


def test_a_refused_connection_and_a_stalled_answer_are_the_two_transport_failures() -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]  # bound, not listening: connections to it are refused
        with pytest.raises(TransportFailure, match="ConnectionRefusedError") as refused:
            Connection(KEY, f"http://127.0.0.1:{port}").call("GET", "/v1/models/m", timeout=10)
    assert not isinstance(refused.value, Stalled)
    answered = threading.Event()
    with Server(lambda h: answered.wait(30)) as server:  # reads the request, answers nothing
        with pytest.raises(Stalled):
            Connection(KEY, server.url).call("GET", "/v1/models/m", timeout=0.5)
        answered.set()


@pytest.fixture
def certificate(tmp_path: Path) -> Iterator[tuple[Path, ssl.SSLContext]]:
    """A self-signed certificate for localhost, and a server context holding it."""
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        + ["-keyout", str(key), "-out", str(cert), "-days", "2", "-subj", "/CN=localhost"]
        + ["-addext", "subjectAltName=DNS:localhost"],
        check=True,
        capture_output=True,
    )
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(cert, key)
    yield cert, server


def test_https_is_verified_and_ssl_cert_file_is_honoured(
    no_httpx2: None, certificate: tuple[Path, ssl.SSLContext], monkeypatch: pytest.MonkeyPatch
) -> None:
    cert, context = certificate
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    with FakeAnthropic([reply("trusted")], tls=context) as api:
        with pytest.raises(TransportFailure, match="CERTIFICATE_VERIFY_FAILED"):
            streamed(Connection(KEY, api.base_url))  # the system's store does not know this certificate
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))
        connection = Connection(KEY, api.base_url)
        connection.warm()  # the TLS context is made on the warming thread, with SSL_CERT_FILE
        assert streamed(connection) == "trusted"
