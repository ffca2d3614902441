"""A loopback stand-in for the part of GitHub's REST API a nightly bot's pull request loop reads and writes.

Shapes follow GitHub's REST reference (docs.github.com/rest: pulls, pulls/reviews, pulls/comments,
issues/comments, checks/runs, actions/workflow-jobs, collaborators) and octokit's example fixtures, cut to
the fields openbot reads plus the ones a client commonly keys on (`id`, `node_id`, `html_url`, `user.type`,
`author_association`). What it does as GitHub does:

- `Authorization: Bearer <token>` (or `token <token>`) on every API path, else 401 with GitHub's body;
- lists page with `per_page` (default 30, at most 100) and `page`, and say so in a `Link` header
  (`<…?page=2&per_page=N>; rel="next"`, `rel="last"`);
- `GET /repos/{o}/{r}/pulls?head=owner:branch&state=open` filters by the head's `owner:branch` label;
- `GET /repos/{o}/{r}/actions/jobs/{id}/logs` answers 302 to a short-lived download URL (here
  `/_download/logs/{id}?sig=…` on the same server, which needs no token and records whether one came);
- `GET /repos/{o}/{r}/collaborators/{user}/permission` gives `permission` (admin|write|read|none: maintain
  reads as write, triage as read) and the finer `role_name`; a stranger gets `none`/`read` as on a public
  repository; with `state["permission_refused"] = 403` (or 404) it refuses, as GitHub does a token that
  may not make the check (`Resource not accessible by integration`).

Tests drive it in process (`with forge_server() as forge: forge.open_pull(...)`); a script or a workflow
under `act` runs it as a program, its state in a JSON file it re-reads whenever the file changes:

    python tests/forge.py serve --port 8765 --state forge.json [--token T]
    python tests/forge.py add --state forge.json comment owner/name 7 alice "please rename x"

Every request is recorded (`forge.seen`: method, path, whether it carried a token).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

TOKEN = "ghs_standInForgeToken0123456789abcdef"
WHEN = "2026-11-20T02:00:00Z"
_ROLES = {"admin": "admin", "maintain": "write", "write": "write", "triage": "read", "read": "read"}


def empty_state(token: str = TOKEN) -> dict[str, Any]:
    return {"token": token, "clock": 0, "next_id": 1000, "repos": {}, "logs": {}}


class Forge:
    """The stand-in's state and the test-side ways to change it (each also a `tests/forge.py add` verb)."""

    def __init__(self, state: dict[str, Any] | None = None, state_file: Path | None = None) -> None:
        self.state = state or empty_state()
        self.state_file = state_file
        self.seen: list[dict[str, Any]] = []
        self.base = ""
        self.lock = threading.RLock()
        self._mtime = 0.0
        if state_file is not None and state_file.exists():
            self._reload()

    # -- persistence (the `serve` form: another process may add items between nights) --
    def _reload(self) -> None:
        assert self.state_file is not None
        mtime = self.state_file.stat().st_mtime
        if mtime != self._mtime:
            self.state = json.loads(self.state_file.read_text(encoding="utf-8"))
            self._mtime = mtime

    def save(self) -> None:
        if self.state_file is not None:
            tmp = self.state_file.with_suffix(".tmp")
            tmp.write_text(json.dumps(self.state, indent=1), encoding="utf-8")
            os.replace(tmp, self.state_file)
            self._mtime = self.state_file.stat().st_mtime

    def fresh(self) -> None:
        if self.state_file is not None and self.state_file.exists():
            self._reload()

    # -- helpers --
    def _id(self) -> int:
        self.state["next_id"] += 1
        return int(self.state["next_id"])

    def _now(self, when: str = "") -> str:
        """Increasing timestamps (one minute apart from WHEN) unless the test names one."""
        if when:
            return when
        self.state["clock"] += 1
        minutes = int(self.state["clock"])
        return f"2026-11-20T{2 + minutes // 60:02d}:{minutes % 60:02d}:00Z"

    def repo(self, full: str) -> dict[str, Any]:
        return self.state["repos"].setdefault(
            full,
            {
                "pulls": [],
                "reviews": {},
                "review_comments": {},
                "comments": {},
                "checks": {},
                "commits": {},
                "perms": {},
            },
        )

    def _user(self, login: str) -> dict[str, Any]:
        bot = login.endswith("[bot]")
        return {
            "login": login,
            "id": zlib.crc32(login.encode()) % 10**7,
            "node_id": "MDQ6VXNlcjE=",
            "type": "Bot" if bot else "User",
            "site_admin": False,
            "html_url": f"https://github.com/{login}",
            "url": f"{self.base}/users/{login}",
        }

    # -- what a test adds --
    def grant(self, full: str, login: str, role: str) -> None:
        """Give `login` a repository role: admin, maintain, write, triage or read."""
        with self.lock:
            self.repo(full)["perms"][login] = role
            self.save()

    def commit(self, full: str, sha: str, when: str) -> None:
        """The committer date GitHub reports for `sha`."""
        with self.lock:
            self.repo(full)["commits"][sha] = when
            self.save()

    def open_pull(
        self, full: str, head: str, sha: str, *, user: str = "github-actions[bot]", when: str = ""
    ) -> int:
        with self.lock:
            r = self.repo(full)
            number = len(r["pulls"]) + 1
            owner = full.split("/")[0]
            r["pulls"].append(
                {
                    "id": self._id(),
                    "number": number,
                    "state": "open",
                    "title": f"openbot: {head}",
                    "body": "",
                    "user": user,
                    "head": {"ref": head, "sha": sha, "label": f"{owner}:{head}"},
                    "base": {"ref": "main", "label": f"{owner}:main"},
                    "created_at": self._now(when),
                }
            )
            r["commits"].setdefault(sha, self._now(when))
            self.save()
            return number

    def push(self, full: str, number: int, sha: str, when: str = "") -> None:
        """The pull request's head moves to `sha` (committed at `when`)."""
        with self.lock:
            r = self.repo(full)
            r["pulls"][number - 1]["head"]["sha"] = sha
            r["commits"][sha] = self._now(when)
            self.save()

    def add_review(self, full: str, number: int, user: str, state: str, body: str, when: str = "") -> int:
        with self.lock:
            r = self.repo(full)
            made = {"id": self._id(), "user": user, "state": state, "body": body, "when": self._now(when)}
            made["commit_id"] = r["pulls"][number - 1]["head"]["sha"]
            r["reviews"].setdefault(str(number), []).append(made)
            self.save()
            return int(made["id"])

    def add_review_comment(
        self, full: str, number: int, user: str, path: str, line: int, body: str, when: str = ""
    ) -> int:
        with self.lock:
            r = self.repo(full)
            made = {
                "id": self._id(),
                "user": user,
                "path": path,
                "line": line,
                "body": body,
                "when": self._now(when),
            }
            made["commit_id"] = r["pulls"][number - 1]["head"]["sha"]
            r["review_comments"].setdefault(str(number), []).append(made)
            self.save()
            return int(made["id"])

    def add_comment(self, full: str, number: int, user: str, body: str, when: str = "") -> int:
        with self.lock:
            made = {"id": self._id(), "user": user, "body": body, "when": self._now(when)}
            self.repo(full)["comments"].setdefault(str(number), []).append(made)
            self.save()
            return int(made["id"])

    def add_check(
        self,
        full: str,
        sha: str,
        name: str,
        conclusion: str,
        log: str | bytes = b"",
        *,
        app: str = "github-actions",
    ) -> int:
        """A completed check run on `sha`; an Actions one (`app`) has a job log of the same id."""
        with self.lock:
            made = {"id": self._id(), "name": name, "conclusion": conclusion, "app": app, "when": self._now()}
            self.repo(full)["checks"].setdefault(sha, []).append(made)
            raw = log.encode() if isinstance(log, str) else log
            self.state["logs"][str(made["id"])] = raw.decode("latin-1")  # bytes kept exactly, JSON-safe
            self.save()
            return int(made["id"])

    # -- the API's answers --
    def pull_json(self, full: str, p: dict[str, Any]) -> dict[str, Any]:
        api, html = f"{self.base}/repos/{full}", f"https://github.com/{full}"
        owner, name = full.split("/")
        repo = {"id": 1296269, "name": name, "full_name": full, "owner": self._user(owner), "private": False}
        return {
            "url": f"{api}/pulls/{p['number']}",
            "id": p["id"],
            "node_id": "MDExOlB1bGxSZXF1ZXN0MQ==",
            "html_url": f"{html}/pull/{p['number']}",
            "number": p["number"],
            "state": p["state"],
            "locked": False,
            "title": p["title"],
            "body": p["body"],
            "user": self._user(p["user"]),
            "draft": False,
            "created_at": p["created_at"],
            "updated_at": p["created_at"],
            "head": {**p["head"], "user": self._user(owner), "repo": repo},
            "base": {**p["base"], "sha": "0" * 40, "user": self._user(owner), "repo": repo},
            "author_association": "NONE",
        }

    def review_json(self, full: str, number: int, v: dict[str, Any]) -> dict[str, Any]:
        html = f"https://github.com/{full}/pull/{number}#pullrequestreview-{v['id']}"
        return {
            "id": v["id"],
            "node_id": "MDE3OlB1bGxSZXF1ZXN0UmV2aWV3ODA=",
            "user": self._user(v["user"]),
            "body": v["body"],
            "state": v["state"],
            "html_url": html,
            "pull_request_url": f"{self.base}/repos/{full}/pulls/{number}",
            "_links": {
                "html": {"href": html},
                "pull_request": {"href": f"{self.base}/repos/{full}/pulls/{number}"},
            },
            "submitted_at": v["when"],
            "commit_id": v["commit_id"],
            "author_association": self._association(full, v["user"]),
        }

    def review_comment_json(self, full: str, number: int, c: dict[str, Any]) -> dict[str, Any]:
        html = f"https://github.com/{full}/pull/{number}#discussion_r{c['id']}"
        return {
            "url": f"{self.base}/repos/{full}/pulls/comments/{c['id']}",
            "pull_request_review_id": None,
            "id": c["id"],
            "node_id": "MDI0OlB1bGxSZXF1ZXN0UmV2aWV3Q29tbWVudDEw",
            "diff_hunk": "@@ -1,1 +1,1 @@",
            "path": c["path"],
            "commit_id": c["commit_id"],
            "original_commit_id": c["commit_id"],
            "user": self._user(c["user"]),
            "body": c["body"],
            "created_at": c["when"],
            "updated_at": c["when"],
            "html_url": html,
            "pull_request_url": f"{self.base}/repos/{full}/pulls/{number}",
            "author_association": self._association(full, c["user"]),
            "line": c["line"],
            "original_line": c["line"],
            "side": "RIGHT",
            "subject_type": "line",
        }

    def comment_json(self, full: str, number: int, c: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": c["id"],
            "node_id": "MDEyOklzc3VlQ29tbWVudDE=",
            "url": f"{self.base}/repos/{full}/issues/comments/{c['id']}",
            "html_url": f"https://github.com/{full}/pull/{number}#issuecomment-{c['id']}",
            "issue_url": f"{self.base}/repos/{full}/issues/{number}",
            "body": c["body"],
            "user": self._user(c["user"]),
            "created_at": c["when"],
            "updated_at": c["when"],
            "author_association": self._association(full, c["user"]),
        }

    def check_json(self, full: str, sha: str, c: dict[str, Any]) -> dict[str, Any]:
        api = f"{self.base}/repos/{full}"
        return {
            "id": c["id"],
            "head_sha": sha,
            "node_id": "MDg6Q2hlY2tSdW40",
            "external_id": "",
            "url": f"{api}/check-runs/{c['id']}",
            "html_url": f"https://github.com/{full}/runs/{c['id']}",
            "details_url": f"https://github.com/{full}/actions/runs/1/job/{c['id']}",
            "status": "completed",
            "conclusion": c["conclusion"],
            "started_at": c["when"],
            "completed_at": c["when"],
            "output": {"title": None, "summary": None, "text": None, "annotations_count": 0},
            "name": c["name"],
            "check_suite": {"id": 5},
            "app": {"id": 15368, "slug": c["app"], "name": c["app"]},
            "pull_requests": [],
        }

    def _association(self, full: str, login: str) -> str:
        role = self.repo(full)["perms"].get(login, "")
        return "OWNER" if login == full.split("/")[0] else ("COLLABORATOR" if role else "NONE")

    def permission_json(self, full: str, login: str) -> dict[str, Any]:
        role = self.repo(full)["perms"].get(login, "read")  # a public repository: everyone reads
        return {"permission": _ROLES.get(role, "none"), "role_name": role, "user": self._user(login)}


def _page(items: list[Any], query: dict[str, list[str]], url: str) -> tuple[list[Any], str]:
    """One page of `items` and its Link header, as GitHub pages a list."""
    per = max(1, min(100, int(query.get("per_page", ["30"])[0])))
    page = max(1, int(query.get("page", ["1"])[0]))
    last = max(1, -(-len(items) // per))
    keep = {k: v[0] for k, v in query.items() if k not in ("page", "per_page")}
    wanted = [("prev", page - 1), ("first", 1)] if page > 1 else []
    wanted += [("next", page + 1), ("last", last)] if page < last else []
    links = ", ".join(
        f'<{url}?{urlencode({**keep, "per_page": per, "page": n})}>; rel="{rel}"' for rel, n in wanted
    )
    return items[(page - 1) * per : page * per], links


class _Handler(BaseHTTPRequestHandler):
    forge: Forge
    disable_nagle_algorithm = True  # one answer, one write: no delayed-ACK wait (docs: shared FACTS)

    def log_message(self, *args: object) -> None:
        pass

    def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header(
            "content-type", "application/json; charset=utf-8" if not isinstance(body, bytes) else "text/plain"
        )
        self.send_header("content-length", str(len(raw)))
        self.send_header("x-github-api-version-selected", "2022-11-28")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(raw)

    def _authorized(self) -> bool:
        given = self.headers.get("authorization", "")
        scheme, _, token = given.partition(" ")
        return scheme.lower() in ("bearer", "token") and token == self.forge.state["token"]

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self._serve("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._serve("POST")

    def do_PATCH(self) -> None:  # noqa: N802
        self._serve("PATCH")

    def _serve(self, method: str) -> None:
        f = self.forge
        split = urlsplit(self.path)
        with f.lock:
            f.fresh()
            f.seen.append({"method": method, "path": self.path, "token": "authorization" in self.headers})
            if split.path.startswith("/_download/logs/"):
                job = split.path.rsplit("/", 1)[1]
                log = f.state["logs"].get(job)
                return (
                    self._send(404, {"message": "Not Found"})
                    if log is None
                    else self._send(200, log.encode("latin-1"))
                )
            if not self._authorized():
                return self._send(
                    401,
                    {
                        "message": "Bad credentials",
                        "documentation_url": "https://docs.github.com/rest",
                        "status": "401",
                    },
                )
            body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
            answer = _route(f, method, split.path, parse_qs(split.query), body)
        status, payload, headers = answer
        self._send(status, payload, headers)


def _route(
    f: Forge, method: str, path: str, query: dict[str, list[str]], body: dict[str, Any]
) -> tuple[int, Any, dict[str, str]]:
    parts = path.strip("/").split("/")
    nf: tuple[int, Any, dict[str, str]] = (404, {"message": "Not Found", "status": "404"}, {})
    if len(parts) < 4 or parts[0] != "repos":
        return nf
    full, rest = f"{parts[1]}/{parts[2]}", parts[3:]
    r = f.repo(full)
    url = f"{f.base}{path}"

    def listed(items: list[Any]) -> tuple[int, Any, dict[str, str]]:
        page, link = _page(items, query, url)
        return 200, page, ({"link": link} if link else {})

    if rest == ["pulls"] and method == "GET":
        head, state = query.get("head", [""])[0], query.get("state", ["open"])[0]
        found = [
            p for p in r["pulls"] if (not head or p["head"]["label"] == head) and state in ("all", p["state"])
        ]
        return listed([f.pull_json(full, p) for p in found])
    if rest == ["pulls"] and method == "POST":
        n = f.open_pull(full, body["head"], body.get("head_sha", "1" * 40))
        r["pulls"][n - 1].update(title=body.get("title", ""), body=body.get("body", ""))
        f.save()
        return 201, f.pull_json(full, r["pulls"][n - 1]), {}
    if len(rest) >= 2 and rest[0] == "pulls" and rest[1].isdigit():
        n = int(rest[1])
        if not 1 <= n <= len(r["pulls"]):
            return nf
        if len(rest) == 2 and method == "PATCH":
            r["pulls"][n - 1].update({k: v for k, v in body.items() if k in ("title", "body", "state")})
            f.save()
        if len(rest) == 2:
            return 200, f.pull_json(full, r["pulls"][n - 1]), {}
        if rest[2:] == ["reviews"]:
            return listed([f.review_json(full, n, v) for v in r["reviews"].get(str(n), [])])
        if rest[2:] == ["comments"]:
            return listed([f.review_comment_json(full, n, c) for c in r["review_comments"].get(str(n), [])])
    if len(rest) == 3 and rest[0] == "issues" and rest[2] == "comments":
        if method == "POST":
            f.add_comment(full, int(rest[1]), body.get("user", "github-actions[bot]"), body["body"])
        return listed([f.comment_json(full, int(rest[1]), c) for c in r["comments"].get(rest[1], [])])
    if len(rest) == 2 and rest[0] == "commits" and rest[1] in r["commits"]:
        when = r["commits"][rest[1]]
        who = {"name": "openbot", "email": "openbot@example.com", "date": when}
        return 200, {"sha": rest[1], "commit": {"author": who, "committer": who, "message": "work"}}, {}
    if len(rest) == 3 and rest[0] == "commits" and rest[2] == "check-runs":
        runs = [f.check_json(full, rest[1], c) for c in r["checks"].get(rest[1], [])]
        page, link = _page(runs, query, url)
        return 200, {"total_count": len(runs), "check_runs": page}, ({"link": link} if link else {})
    if rest[:2] == ["actions", "jobs"] and rest[3:] == ["logs"] and rest[2] in f.state["logs"]:
        return 302, b"", {"location": f"{f.base}/_download/logs/{rest[2]}?sig=expires-in-a-minute"}
    if rest[0] == "collaborators" and rest[2:] == ["permission"]:
        if refused := f.state.get("permission_refused"):  # a token not allowed the check (docs/FEEDBACK.md)
            said = "Resource not accessible by integration" if refused == 403 else "Not Found"
            return refused, {"message": said, "status": str(refused)}, {}
        return 200, f.permission_json(full, rest[1]), {}
    return nf


@contextmanager
def forge_server(forge: Forge | None = None, port: int = 0) -> Iterator[Forge]:
    """The stand-in on loopback; `forge.base` is its GITHUB_API_URL."""
    forge = forge or Forge()
    handler = type("Handler", (_Handler,), {"forge": forge})
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    forge.base = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield forge
    finally:
        server.shutdown()
        server.server_close()


_ADD = {
    "grant": ("repo", "user", "role"),
    "commit": ("repo", "sha", "when"),
    "pull": ("repo", "head", "sha"),
    "push": ("repo", "number", "sha"),
    "review": ("repo", "number", "user", "state", "body"),
    "review-comment": ("repo", "number", "user", "path", "line", "body"),
    "comment": ("repo", "number", "user", "body"),
    "check": ("repo", "sha", "name", "conclusion", "log"),
}


def _add(forge: Forge, verb: str, args: list[str]) -> None:
    names = _ADD[verb]
    if len(args) != len(names):
        raise SystemExit(f"forge.py add {verb} takes: {' '.join(names)}")
    a: list[Any] = [int(x) if n in ("number", "line") else x for n, x in zip(names, args, strict=True)]
    do = {
        "grant": forge.grant,
        "commit": forge.commit,
        "pull": forge.open_pull,
        "push": forge.push,
        "review": forge.add_review,
        "review-comment": forge.add_review_comment,
        "comment": forge.add_comment,
        "check": forge.add_check,
    }[verb]
    print(do(*a))


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="tests/forge.py", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    serve = sub.add_parser("serve", help="answer on 127.0.0.1:PORT from the state file")
    serve.add_argument("--port", type=int, default=0)
    serve.add_argument("--state", type=Path, required=True)
    serve.add_argument(
        "--token", default="", help=f"the token it accepts (default: the state's, else {TOKEN})"
    )
    add = sub.add_parser("add", help=f"add to the state file: {', '.join(_ADD)}")
    add.add_argument("--state", type=Path, required=True)
    add.add_argument("verb", choices=sorted(_ADD))
    add.add_argument("args", nargs="*")
    ns = parser.parse_args(argv)
    token = getattr(ns, "token", "") or TOKEN
    forge = Forge(empty_state(token) if not ns.state.exists() else None, ns.state)
    if ns.cmd == "add":
        with forge.lock:
            forge.base = "https://api.github.com"
            _add(forge, ns.verb, ns.args)
        return
    if ns.token:
        forge.state["token"] = ns.token
    forge.save()
    with forge_server(forge, ns.port) as running:
        print(running.base, flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main(sys.argv[1:])
