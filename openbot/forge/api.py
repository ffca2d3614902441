"""A small client of GitHub's REST API: JSON pages followed by their `Link` header, a job log's tail.

The token is sent to the API's own base address and nowhere else: a `Link` to another address ends the
pages, and a job log's download URL (GitHub answers 302 to a short-lived signed URL on another host) is
fetched without it — urllib's own redirect handling would carry the Authorization header along.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Mapping
from email.message import Message
from typing import Any
from urllib.parse import urlencode, urlsplit

from openbot.errors import ForgeError

MAX_PAGES = 20  # 2,000 items of a kind at 100 a page: more is not one night's feedback
MAX_LOG_READ = 256 << 20  # a job log is read through to its end, its tail kept; past this it is cut
API_VERSION = "2022-11-28"


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # a 3xx comes back as an HTTPError with its Location


def _next_link(header: str | None) -> str:
    for part in (header or "").split(","):
        url, _, rel = part.partition(";")
        if 'rel="next"' in rel:
            return url.strip().strip("<>")
    return ""


class ForgeAPI:
    def __init__(self, base: str, token: str, timeout: float = 30.0) -> None:
        self.base = base.rstrip("/")
        self.token = token
        self.timeout = timeout
        self._opener = urllib.request.build_opener(_NoRedirect)

    def _open(self, url: str, *, auth: bool) -> Any:
        headers = {"Accept": "application/vnd.github+json", "User-Agent": "openbot"}
        if auth:
            headers |= {"Authorization": f"Bearer {self.token}", "X-GitHub-Api-Version": API_VERSION}
        try:
            return self._opener.open(urllib.request.Request(url, headers=headers), timeout=self.timeout)
        except urllib.error.HTTPError as e:
            if 300 <= e.code < 400 and e.headers.get("location"):
                return e
            raise ForgeError(_refusal(e, url, self.base), status=e.code) from None
        except (urllib.error.URLError, OSError, ValueError) as e:
            reason = getattr(e, "reason", e)
            raise ForgeError(f"cannot reach the forge's API at {self.base}: {reason}") from None

    def get(self, path: str, params: Mapping[str, str | int] | None = None) -> tuple[Any, Message]:
        url = path if path.startswith(self.base + "/") else f"{self.base}{path}"
        url += f"?{urlencode(params)}" if params else ""
        with self._open(url, auth=True) as r:
            try:
                return json.loads(r.read()), r.headers
            except ValueError:
                raise ForgeError(
                    f"the forge's API at {self.base} answered {path} with something not JSON"
                ) from None

    def pages(self, path: str, params: Mapping[str, str | int] | None = None, key: str = "") -> list[Any]:
        """Every item of a paged list (`key`: the list inside an object, as check runs come)."""
        items: list[Any] = []
        url, query = path, {"per_page": 100, **(params or {})}
        for _ in range(MAX_PAGES):
            data, headers = self.get(url, query)
            items += data.get(key, []) if key else data
            url, query = _next_link(headers.get("link")), {}
            if not url.startswith(self.base + "/"):
                break
        return items

    def log_tail(self, repo: str, job: int, max_bytes: int) -> bytes:
        """The last `max_bytes` of a job's log (b"" when the job has none: not an Actions check)."""
        with self._open(f"{self.base}/repos/{repo}/actions/jobs/{job}/logs", auth=True) as r:
            location = r.headers.get("location") if r.status in (301, 302, 303, 307, 308) else None
            if location is None:
                return _tail(r, max_bytes)
        if urlsplit(location).scheme not in ("https", "http"):
            raise ForgeError(f"the forge's API sent job {job}'s log to {location!r}, not a web address")
        with self._open(location, auth=False) as r:
            return _tail(r, max_bytes)


def _tail(stream: Any, max_bytes: int) -> bytes:
    kept, read = b"", 0
    while read < MAX_LOG_READ and (chunk := stream.read(1 << 16)):
        read += len(chunk)
        kept = (kept + chunk)[-max_bytes:]
    return kept


def _refusal(e: urllib.error.HTTPError, url: str, base: str) -> str:
    try:
        message = str(json.loads(e.read()).get("message", ""))[:200]
    except (ValueError, AttributeError, OSError):
        message = ""
    e.close()
    where = urlsplit(url).path
    hint = " (check GH_TOKEN / GITHUB_TOKEN)" if e.code in (401, 403) else ""
    return f"the forge's API at {base} answered {e.code} {message or e.reason} for {where}{hint}"
