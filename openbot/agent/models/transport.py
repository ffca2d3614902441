"""The HTTP transport openbot's own API client uses: TLS set up only when a request needs it.

httpx2 builds its default transport's TLS context when a client is made: loading the certificate store
costs ~45 ms of CPU, for nothing when the API is a plain `http://` server (a local model server, a
loopback stand-in). This transport makes httpx2's own transport per scheme on first use, with the
client's defaults: `https://` verified as before, `http://` without loading certificates (no TLS is
ever made on it: a proxy, if the environment names one, is a transport of its own in the client).
"""

from __future__ import annotations

import threading

import httpx2


class LazyTLSTransport(httpx2.BaseTransport):
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_scheme: dict[str, httpx2.HTTPTransport] = {}

    def ready(self, url: str) -> None:
        """Make the transport `url` will use now (on the caller's thread) rather than on its first call."""
        scheme, sep, _ = url.partition("://")
        if sep:  # a URL that does not parse fails where it is used, as before
            self._for(scheme.lower())

    def _for(self, scheme: str) -> httpx2.HTTPTransport:
        with self._lock:
            if scheme not in self._by_scheme:
                # https (or anything else): exactly httpx2's default transport; http: never does TLS.
                plain = scheme == "http"
                self._by_scheme[scheme] = httpx2.HTTPTransport(verify=not plain)
            return self._by_scheme[scheme]

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        return self._for(request.url.scheme).handle_request(request)

    def close(self) -> None:
        with self._lock:
            transports, self._by_scheme = list(self._by_scheme.values()), {}
        for transport in transports:
            transport.close()
