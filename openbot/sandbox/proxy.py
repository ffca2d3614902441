"""The way out of a sandbox whose network is a list of hosts: an HTTP(S) proxy in openbot's own process,
outside the walls, on a Unix socket bound read-only into the sandbox (forward.py relays to it from the
sandbox's loopback). It allows CONNECT and absolute-URI HTTP requests to the listed names and ports only,
resolves names itself, refuses IP literals and private, loopback and link-local addresses unless a pattern
names them (hosts.py), and never looks inside TLS. Each connection is one `network` event; a refusal
answers 403 with a body naming the config key to change. Bounded: MAX_CONNECTIONS at once (one more is a
503 and an event), MAX_BYTES per connection, IDLE_SECS without a byte (a connection cut short says why in
its event); tests set smaller ones in OPENBOT_PROXY_MAX_CONNECTIONS, _MAX_BYTES and _IDLE_SECS (openbot's
own environment, never the agent's). `close()` ends it with the run (or the setup it served).
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import selectors
import socket
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from openbot.sandbox.hosts import HostPattern, find, ip_literal

MAX_CONNECTIONS = 32
MAX_BYTES = 4 << 30
IDLE_SECS = 120.0
HEAD_LIMIT = 64 * 1024

Report = Callable[[dict[str, object]], None]


class Refused(Exception):
    """Why a connection is not made: said in the 403 and the event."""


class Proxy:
    def __init__(self, patterns: tuple[HostPattern, ...], key: str, report: Report) -> None:
        self.patterns, self.key, self.report = patterns, key, report
        self.max_connections = int(_limit("MAX_CONNECTIONS", MAX_CONNECTIONS))
        self.max_bytes = int(_limit("MAX_BYTES", MAX_BYTES))
        self.idle_secs = _limit("IDLE_SECS", IDLE_SECS)
        self.dir = Path(tempfile.mkdtemp(prefix="openbot-net-"))
        self.path = self.dir / "proxy.sock"
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(str(self.path))
        self._listener.listen(self.max_connections)
        self._slots = threading.BoundedSemaphore(self.max_connections)
        self._closed = False
        threading.Thread(target=self._accept, name="openbot-proxy", daemon=True).start()

    def close(self) -> None:
        self._closed = True
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        with contextlib.suppress(OSError):
            self.path.unlink()
            self.dir.rmdir()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if not self._slots.acquire(blocking=False):
                why = f"more than {self.max_connections} connections at once"
                self._event("*", 0, False, why, 0, 0)  # which host it wanted is not read
                _answer(client, 503, f"openbot proxy: {why}")
                client.close()
                continue
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        host, port, up, down, cut = "", 0, 0, 0, ""
        try:
            client.settimeout(self.idle_secs)
            head, rest = _read_head(client)
            method, host, port, first = _target(head)
            upstream = self._connect(host, port)
            with upstream:
                if method == "CONNECT":
                    client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                    sent = rest
                else:
                    sent = _origin_form(head, first) + rest
                upstream.sendall(sent)
                up, down, cut = self._relay(client, upstream)
                up += len(sent)
            self._event(host, port, True, cut, up, down)
        except Refused as e:  # the event first: once the command has its answer, it may end the session
            self._event(host, port, False, str(e), 0, 0)
            _answer(client, 403, f"openbot: {e}; to allow it, add it to `{self.key}` in the bot's config")
        except (OSError, ValueError, UnicodeError) as e:
            _answer(client, 502, f"openbot proxy: {host}:{port}: {e}")
            self._event(host, port, False, f"failed: {e}", up, down)
        finally:
            client.close()
            self._slots.release()

    def _event(self, host: str, port: int, allowed: bool, reason: str, up: int, down: int) -> None:
        with contextlib.suppress(Exception):  # a full disk or closed log must not kill the proxy
            self.report(dict(host=host, port=port, allowed=allowed, reason=reason, key=self.key,
                             bytes_sent=up, bytes_received=down))  # fmt: skip

    def _connect(self, host: str, port: int) -> socket.socket:
        pattern = find(self.patterns, host, port)
        if pattern is None:
            raise Refused(f"{host}:{port} is not in the list")
        literal = ip_literal(host)
        if literal is not None and not pattern.names_local:
            raise Refused(f"{host}:{port} is an IP address (list it as such to allow it)")
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except socket.gaierror as e:
            raise OSError(f"cannot resolve {host}: {e.strerror}") from None
        addresses = [i for i in infos if pattern.names_local or _public(str(i[4][0]))]
        if not addresses:
            raise Refused(f"{host} resolves to a private, loopback or link-local address only")
        family, kind, proto, _, address = addresses[0]
        upstream = socket.socket(family, kind, proto)
        upstream.settimeout(self.idle_secs)
        try:
            upstream.connect(address)
        except OSError:
            upstream.close()
            raise
        return upstream

    def _relay(self, client: socket.socket, upstream: socket.socket) -> tuple[int, int, str]:
        """Copy both ways until both sides are done, a side idles, or the bytes passed the limit: the
        bytes each way, and why the connection was cut short ("" if it was not)."""
        counts = {client: 0, upstream: 0}
        other = {client: upstream, upstream: client}
        open_ = {client, upstream}
        with selectors.DefaultSelector() as sel:
            for s in open_:
                sel.register(s, selectors.EVENT_READ)
            while open_:
                if sum(counts.values()) >= self.max_bytes:
                    return counts[client], counts[upstream], f"cut at {self.max_bytes} bytes"
                ready = sel.select(self.idle_secs)
                if not ready:
                    return counts[client], counts[upstream], f"cut after {self.idle_secs:g} s idle"
                for key, _ in ready:
                    src = key.fileobj
                    assert isinstance(src, socket.socket)
                    data = src.recv(65536)
                    if not data:
                        sel.unregister(src)
                        open_.discard(src)
                        with contextlib.suppress(OSError):
                            other[src].shutdown(socket.SHUT_WR)
                        continue
                    other[src].sendall(data)
                    counts[src] += len(data)
        return counts[client], counts[upstream], ""


def _limit(name: str, default: float) -> float:
    try:
        value = float(os.environ.get(f"OPENBOT_PROXY_{name}") or default)
    except ValueError:
        return default
    return value if value > 0 else default


def _public(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%")[0])
    return ip.is_global and not ip.is_multicast


def _read_head(client: socket.socket) -> tuple[bytes, bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = client.recv(4096)
        if not chunk or len(data) > HEAD_LIMIT:
            raise ValueError("no complete request head")
        data += chunk
    head, rest = data.split(b"\r\n\r\n", 1)
    return head + b"\r\n\r\n", rest


def _target(head: bytes) -> tuple[str, str, int, str]:
    """(method, host, port, request line) of a CONNECT or an absolute-URI request."""
    first = head.split(b"\r\n", 1)[0].decode("ascii")
    method, target, _version = first.split(" ")
    if method == "CONNECT":
        host, _, port = target.rpartition(":")
        return method, host.strip("[]").lower(), int(port), first
    if not target.startswith("http://"):
        raise Refused(f"{target[:80]!r} is not an http:// URL (https goes through CONNECT)")
    authority = target[7:].split("/", 1)[0]
    host, colon, port = authority.rpartition(":") if "]" not in authority.rpartition(":")[2] else ("", "", "")
    host, port = (host, port) if colon and port.isdigit() else (authority, "80")
    return method, host.strip("[]").lower(), int(port), first


def _origin_form(head: bytes, first: str) -> bytes:
    """The request as the origin server expects it: path only, no proxy headers, one request."""
    method, target, version = first.split(" ")
    path = "/" + target[7:].split("/", 1)[1] if "/" in target[7:] else "/"
    lines = head.decode("latin-1").split("\r\n")[1:]
    kept = [ln for ln in lines if ln and not ln.lower().startswith(("proxy-", "connection:", "keep-alive:"))]
    return "\r\n".join([f"{method} {path} {version}", *kept, "Connection: close", "", ""]).encode("latin-1")


def _answer(client: socket.socket, status: int, text: str) -> None:
    reason = {403: "Forbidden", 502: "Bad Gateway", 503: "Service Unavailable"}[status]
    body = (text + "\n").encode()
    head = f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}\r\n"
    with contextlib.suppress(OSError):
        client.sendall(head.encode() + b"Connection: close\r\n\r\n" + body)


@contextlib.contextmanager
def serving(patterns: tuple[HostPattern, ...], key: str, report: Report) -> Iterator[Proxy]:
    proxy = Proxy(patterns, key, report)
    try:
        yield proxy
    finally:
        proxy.close()
