"""The Messages API over HTTP, spoken directly: openbot's own thin client, on the standard library for a
plain request (`direct.py`) and on `httpx2` (the SDK's transport) through a proxy or a redirect.

Why not the `anthropic` SDK: importing it builds ~1,400 pydantic models from ~3,300 modules, 1.0–1.5 s of
CPU before a run's first request (twice Claude Code's whole launch → first request), and it deep-copies
and re-validates the whole conversation on every call. openbot needs little of it — the headers, the SSE
stream, the error shapes, three routes — and keeps replies as plain dicts anyway. The wire is the SDK's:
the same headers (`Authorization: Bearer`, `anthropic-version`, `anthropic-beta`), `ANTHROPIC_BASE_URL`,
and proxies and certificates as httpx reads them from the environment. The SDK stays the reference: tests
feed the same bytes to it and to this client and require the same request and the same final message.

Errors: a non-2xx answer or an `event: error` frame in an accepted stream is an `ApiError` (status 200 for
the latter, as the SDK has it); a transport failure is a `TransportFailure` (`Stalled` when nothing came
within the timeout), httpx2's too; a frame that is not JSON is a `BrokenStream`. Retrying is the backend's
business, never this module's.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from openbot import __version__
from openbot.agent.models import direct, sse
from openbot.agent.models.direct import Stalled, TransportFailure
from openbot.agent.models.params import encode_body

API_VERSION = "2026-10-21"  # the SDK's ANTHROPIC_API_VERSION (anthropic 2.12)
DEFAULT_BASE_URL = "https://api.anthropic.com"
CONNECT_TIMEOUT_SECS = 5.0  # the SDK's default
PING: dict[str, object] = {"type": "ping"}


KEY_VARS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")  # the SDK's order: a key wins over a token


def api_key() -> str:
    """The credential from the environment, as the SDK reads it ("" when there is none)."""
    return next((os.environ[v] for v in KEY_VARS if os.environ.get(v)), "")


class ApiError(Exception):
    """The API said no: an HTTP status with its `{"type": "error", "error": {...}}` body, or an
    `event: error` frame in an accepted stream (status 200)."""

    def __init__(self, status_code: int, headers: Any, body: object) -> None:
        self.status_code = status_code
        self.headers = headers
        self.body = body
        error = body.get("error") if isinstance(body, dict) else None
        error = error if isinstance(error, dict) else {}
        self.type = str(error.get("type") or "error")
        text = body if isinstance(body, str) else ""
        self.message = str(error.get("message") or text[:500] or f"Error code: {status_code}")
        super().__init__(f"HTTP {status_code} {self.type}: {self.message}")


class BrokenStream(Exception):
    """The stream carried a frame that is not JSON: a fault on the way, like a cut connection."""


class Connection:
    """One HTTP client for the run (connections are kept alive between calls); `shared` gives the
    process's own, so the Models API lookup and the run's calls share it. A plain request goes straight
    out on the standard library (`direct.py`); one through a proxy, or redirected, through httpx2."""

    def __init__(self, key: str, base_url: str | None = None) -> None:
        self.base_url = _base(base_url)
        self._headers = {
            "Authorization": f"Bearer {key}",
            "anthropic-version": API_VERSION,
            "content-type": "application/json",
            "accept": "application/json",
            "user-agent": f"openbot/{__version__}",
        }
        self._pool = direct.Pool()
        self._client: object = None  # httpx2's, made for the first request that is not plain
        self._warming: threading.Thread | None = None

    def warm(self) -> None:
        """Set up what the first call needs on a thread of its own while the caller goes on: for an
        https:// API the TLS context (the certificate store loads without holding the GIL); for an API
        that is not plain, httpx2 and its client. The first call waits for it."""
        if self._warming is None:
            self._warming = threading.Thread(target=self._build, name="openbot-http", daemon=True)
            self._warming.start()

    def _build(self) -> None:
        try:
            if direct.plain(self.base_url):
                self._pool.ready(self.base_url)
            else:
                self._httpx2()
        except Exception:  # noqa: BLE001 (raised again where it is first used)
            pass

    def _httpx2(self) -> Any:
        if self._client is None:
            import httpx2

            # Its defaults, as the SDK's: proxies from the environment (a client given its own transport
            # would ignore them), verified TLS, redirects followed.
            self._client = httpx2.Client(follow_redirects=True)
        return self._client

    def close(self) -> None:
        """Close the kept-alive connections (httpx2's too, when it was used)."""
        self._pool.close()
        if self._client is not None:
            self._httpx2().close()

    def stream(
        self, path: str, body: dict[str, object], *, timeout: float, betas: Sequence[str]
    ) -> Iterator[dict[str, Any]]:
        """The events of a streamed call, each a decoded `data:` object, as they arrive; a `ping` or an
        SSE comment is `PING`. Lines split on CR/LF only, as the SDK splits them (see `sse`)."""
        with _failures():
            response = self._send("POST", path, body, timeout, betas, stream=True)
            try:
                if response.status_code >= 300:
                    response.read()
                    raise ApiError(response.status_code, response.headers, _body(response.text))
                for event, data in sse.frames(sse.lines(response.iter_bytes())):
                    if event == "error":
                        raise ApiError(response.status_code, response.headers, _body(data))
                    if event in ("ping", sse.KEEPALIVE):
                        yield PING  # liveness only: the caller holds its budgets on it (outage.Watch)
                        continue
                    if event is None or not data:
                        continue  # as the SDK: frames without an `event:` line are dropped
                    try:
                        yield json.loads(data)
                    except ValueError:
                        raise BrokenStream(f"a {event} frame that is not JSON: {data[:200]}") from None
            finally:
                response.close()

    def call(
        self,
        method: str,
        path: str,
        body: dict[str, object] | None = None,
        *,
        timeout: float,
        betas: Sequence[str] = (),
    ) -> dict[str, Any]:
        """One plain JSON call (count_tokens, the Models API)."""
        with _failures():
            response = self._send(method, path, body, timeout, betas, stream=False)
            try:
                text = response.text
            finally:
                response.close()
        if response.status_code >= 300:
            raise ApiError(response.status_code, response.headers, _body(text))
        value = json.loads(text)
        return value if isinstance(value, dict) else {}

    def _send(
        self,
        method: str,
        path: str,
        body: dict[str, object] | None,
        timeout: float,
        betas: Sequence[str],
        *,
        stream: bool,
    ) -> Any:
        """The answer, its body not yet read: `status_code`, `headers`, `iter_bytes()`, `text`, `close()`."""
        if self._warming is not None:
            self._warming.join()
        url = self.base_url + path
        headers = dict(self._headers)  # `accept: application/json` on streams too, as the SDK sends
        if betas:  # as the SDK's beta namespace: the header (the route is the same)
            headers["anthropic-beta"] = ",".join(betas)
        content = None if body is None else encode_body(body).encode()
        connect = min(CONNECT_TIMEOUT_SECS, timeout)
        if direct.plain(url):
            response = self._pool.send(method, url, headers, content, timeout=timeout, connect=connect)
            if not response.is_redirect:
                return response
            response.close()  # httpx2 sends it again and follows the redirect, as it always did
        import httpx2

        client = self._httpx2()
        limits = httpx2.Timeout(timeout, connect=connect)
        request = client.build_request(method, url, headers=headers, content=content, timeout=limits)
        return client.send(request, stream=stream)


@contextmanager
def _failures() -> Iterator[None]:
    """httpx2's transport errors as the plain path's (`direct.py`): a timeout is `Stalled`, any other
    failure to get an answer a `TransportFailure`. (httpx2 is looked up, never imported, here.)"""
    try:
        yield
    except Exception as e:
        httpx2 = sys.modules.get("httpx2")
        if httpx2 is not None and isinstance(e, httpx2.TimeoutException):
            raise Stalled(f"{type(e).__name__}: {e}") from e
        if httpx2 is not None and isinstance(e, httpx2.HTTPError):
            raise TransportFailure(f"{type(e).__name__}: {e}") from e
        raise


_SHARED: dict[tuple[str, str], Connection] = {}


def shared(key: str, base_url: str | None = None) -> Connection:
    """The process's connection for this credential and server (`ANTHROPIC_BASE_URL` read now)."""
    where = (key, _base(base_url))
    if where not in _SHARED:
        _SHARED[where] = Connection(key, base_url)
    return _SHARED[where]


def reach_hint(base_url: str) -> str:
    """What to check when the API's host cannot be reached: the variable that moved it, else the network."""
    if os.environ.get("ANTHROPIC_BASE_URL"):
        return f"check ANTHROPIC_BASE_URL, now {base_url}, and the network (DNS)"
    return f"check the network (DNS): {base_url} must be reachable, or set ANTHROPIC_BASE_URL"


def _base(base_url: str | None) -> str:
    return (base_url or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")


def _body(text: str) -> object:
    try:
        return json.loads(text)
    except ValueError:
        return text
