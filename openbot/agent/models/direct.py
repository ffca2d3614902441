"""HTTP/1.1 straight to the API server on the standard library (`http.client`): the plain case of openbot's
own Messages API client, without importing httpx2.

Why: importing httpx2 and building its client is ~70 ms of CPU, on a thread that competes for the GIL with
the whole start of a run; `http.client` is ~10 ms. The plain case is what nearly every run is: an http or
https URL, no proxy in the environment, no credentials in the URL, no redirect. Anything else is not
plain, and goes through httpx2 exactly as before (`anthropic/http.py` decides, per request):
- a proxy named in the environment (`http_proxy`, `https_proxy`, `all_proxy`, either case), or any system
  other than Linux (where urllib and httpx also read the system's proxy settings): httpx2 reads them;
- a redirect: this response is dropped and httpx2 sends the request again and follows it.

What it does as httpx2 did: keep-alive connections reused between calls (one found closed by the server
while idle is dropped before use, as httpcore does); the connect timeout and the read timeout (each read
of the socket); https verified against `SSL_CERT_FILE` / `SSL_CERT_DIR` when set, else the system's store
(OpenSSL's compiled-in paths, else the usual bundle files, as httpcore2 finds them on Linux). Transport
failures are `TransportFailure`, a read that timed out `Stalled`: the caller maps httpx2's to the same.
"""

from __future__ import annotations

import http.client
import os
import select
import socket
import ssl
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

PROXY_VARS = ("http_proxy", "https_proxy", "all_proxy")
REDIRECTS = (301, 302, 303, 307, 308)
READ_SIZE = 65536
# Where Linux distributions keep the certificate bundle, when OpenSSL's compiled-in paths are missing
# (a Python built elsewhere): the list httpcore2 and truststore use.
CA_FILE_CANDIDATES = (
    "/etc/ssl/cert.pem",
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
    "/etc/pki/tls/cert.pem",
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/ssl/ca-bundle.pem",
)


class TransportFailure(Exception):
    """The connection failed: refused, reset, cut mid-answer, or an answer that is not HTTP."""


class Stalled(TransportFailure):
    """Nothing arrived within the read timeout (or the connection was not made within the connect one)."""


def plain(url: str) -> bool:
    """Whether a request to `url` is the plain case this module serves (see the module's docstring)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or parts.username or parts.password is not None:
        return False
    return sys.platform == "linux" and not any(
        os.environ.get(v) or os.environ.get(v.upper()) for v in PROXY_VARS
    )


def tls_context() -> ssl.SSLContext:
    """A verifying client context, with the certificates httpcore2 would load on Linux."""
    cafile, capath = os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR")
    if cafile or capath:
        return ssl.create_default_context(cafile=cafile or None, capath=None if cafile else capath)
    paths = ssl.get_default_verify_paths()
    if (paths.cafile and os.path.isfile(paths.cafile)) or (paths.capath and os.path.isdir(paths.capath)):
        return ssl.create_default_context()
    bundle = next((f for f in CA_FILE_CANDIDATES if os.path.isfile(f)), None)
    return ssl.create_default_context(cafile=bundle)


class Response:
    """An answer being read: `status_code`, `headers` (case-insensitive `get`), the body as it arrives.
    `close` gives the connection back for the next call when the body was read to its end."""

    def __init__(self, pool: Pool, where: tuple[str, str, int], conn: http.client.HTTPConnection) -> None:
        self._pool, self._where, self._conn = pool, where, conn
        with failures():
            self._answer = conn.getresponse()
        self.status_code = self._answer.status
        self.headers = self._answer.headers
        self._content: bytes | None = None

    @property
    def is_redirect(self) -> bool:
        return self.status_code in REDIRECTS and "location" in self.headers

    def iter_bytes(self) -> Iterator[bytes]:
        with failures():
            while chunk := self._answer.read1(READ_SIZE):
                yield chunk

    def read(self) -> bytes:
        """The rest of the body (all of it, again, on a later call)."""
        if self._content is None:
            with failures():
                self._content = self._answer.read()
        return self._content

    @property
    def text(self) -> str:
        try:
            return self.read().decode(self.headers.get_content_charset() or "utf-8", errors="replace")
        except LookupError:  # a charset Python does not know: the API's own is UTF-8
            return self.read().decode("utf-8", errors="replace")

    def close(self) -> None:
        if self._answer.isclosed() and not self._answer.will_close:
            self._pool.give_back(self._where, self._conn)
        else:  # an answer not read to its end leaves the connection mid-stream: it cannot carry another
            self._answer.close()  # its file holds the socket open until it is closed itself
            self._conn.close()


class Pool:
    """Idle keep-alive connections per (scheme, host, port); a connection is used by one call at a time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: dict[tuple[str, str, int], list[http.client.HTTPConnection]] = {}
        self._tls: ssl.SSLContext | None = None

    def ready(self, url: str) -> None:
        """Set up now (on a warming thread) what a first call to `url` needs: the TLS context for https."""
        if urlsplit(url).scheme == "https":
            self._context()

    def send(
        self,
        method: str,
        url: str,
        headers: dict[str, str],
        body: bytes | None,
        *,
        timeout: float,
        connect: float,
    ) -> Response:
        parts = urlsplit(url)
        https = parts.scheme == "https"
        where = (parts.scheme, parts.hostname or "", parts.port or (443 if https else 80))
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        conn = self._take(where) or self._connect(where, connect)
        try:
            with failures():
                if conn.sock is None:
                    conn.connect()  # with the connect timeout, the one the connection was made with
                conn.sock.settimeout(timeout)  # then each read (and write) has the call's timeout
                conn.request(method, target, body=body, headers=headers)
            return Response(self, where, conn)
        except BaseException:
            conn.close()
            raise

    def give_back(self, where: tuple[str, str, int], conn: http.client.HTTPConnection) -> None:
        with self._lock:
            self._idle.setdefault(where, []).append(conn)

    def close(self) -> None:
        with self._lock:
            idle, self._idle = [c for conns in self._idle.values() for c in conns], {}
        for conn in idle:
            conn.close()

    def __del__(self) -> None:  # a pool let go of closes its idle connections (no socket left to the GC)
        self.close()

    def _take(self, where: tuple[str, str, int]) -> http.client.HTTPConnection | None:
        while True:
            with self._lock:
                conns = self._idle.get(where)
                if not conns:
                    return None
                conn = conns.pop()
            if conn.sock is not None and not _readable(conn.sock):
                return conn
            conn.close()  # closed by the server while idle (or it sent what nobody asked for): a new one

    def _connect(self, where: tuple[str, str, int], timeout: float) -> http.client.HTTPConnection:
        scheme, host, port = where
        if scheme == "https":
            return http.client.HTTPSConnection(host, port, timeout=timeout, context=self._context())
        return http.client.HTTPConnection(host, port, timeout=timeout)

    def _context(self) -> ssl.SSLContext:
        with self._lock:
            if self._tls is None:
                self._tls = tls_context()
            return self._tls


def _readable(sock: socket.socket) -> bool:
    """An idle keep-alive socket with something to read has been closed by the server (or is out of step)."""
    try:
        return bool(select.select([sock], [], [], 0)[0])
    except (OSError, ValueError):
        return True


@contextmanager
def failures() -> Iterator[None]:
    """The standard library's transport errors as this module's: a timeout is `Stalled`, a socket error or
    an answer that is not HTTP is a `TransportFailure`."""
    try:
        yield
    except TransportFailure:
        raise
    except TimeoutError as e:
        raise Stalled(f"timed out: {e}") from e
    except (OSError, http.client.HTTPException) as e:
        text, name = str(e), type(e).__name__
        raise TransportFailure(text if text.startswith(name) else f"{name}: {text}") from e
