"""A loopback stand-in for what `openbot skills` reaches: skills.sh's search API, GitHub's API (the commit a
skill is pinned to) and GitHub's raw content at that commit. It answers a fixed table of paths (a key
ending in `?` answers every query of that path), 404 elsewhere, and records each path it is asked."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@contextmanager
def skills_server(answers: dict[str, bytes], seen: list[str]) -> Iterator[dict[str, str]]:
    """Serve `answers` on loopback; yields the environment that points openbot's three addresses at it."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            seen.append(self.path)
            key = next(
                (k for k in answers if self.path == k or (k.endswith("?") and self.path.startswith(k))), ""
            )
            body = answers.get(key, b"404: Not Found")
            self.send_response(200 if key else 404)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield {"OPENBOT_SKILLS_REGISTRY": base, "OPENBOT_SKILLS_RAW": base, "OPENBOT_SKILLS_API": base}
    finally:
        server.shutdown()
        server.server_close()
