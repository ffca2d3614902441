"""What `openbot feedback gather` reads of a bot's pull request, and the rule it keeps (docs/FEEDBACK.md).

Run as the gate's `forge.read` child (`python -P -m openbot.forge.gather …`, the token in the one variable
its `--token-env` names): it prints the feedback document on stdout, or one line on stderr and exits 2.

The rule: the open pull request whose head is `owner:<head>`; its head commit's failed check runs (a
GitHub Actions job's log tail, another app's output text); reviews that request changes or comment,
review comments and issue comments written (or edited) after the head commit's time — feedback on the
work as it now stands — and only from people whose permission on the repository is write or admin
(`maintain` reads as write). Anyone else's lands in `ignored` with the reason; so does the bot's own.
"""

from __future__ import annotations

import argparse
import email.utils
import json
import os
import re
import sys
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from openbot.errors import ForgeError
from openbot.forge.api import ForgeAPI
from openbot.redact import Redactor

VERSION = 1
LOG_BYTES = 16 << 10  # the tail of a failed job's log: at most this many bytes…
LOG_LINES = 200  # …and this many lines
BODY_CHARS = 8000  # a comment or review body longer than this is cut
FAILED = ("failure", "timed_out", "startup_failure")
WRITE = ("admin", "write")
# What the token needs for the permission check (docs/FEEDBACK.md, "The token's path"): without it, no one's
# feedback is taken, and the document's `warnings` says so once.
GRANT = (
    "give the token read access to the repository's metadata and run it as an account with write access"
    " (a fine-grained or app token: 'Metadata: read', which a workflow's GITHUB_TOKEN always has; a"
    " classic token: the 'repo' scope)"
)
UNCHECKED = "unknown"
BOT_LOGIN = "github-actions[bot]"  # who opens the nightly pull request with the workflow's own token
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _when(stamp: str | None) -> datetime | None:
    try:
        return datetime.fromisoformat(stamp) if stamp else None
    except ValueError:
        return None


@dataclass
class Gathering:
    api: ForgeAPI
    repo: str
    bot_login: str
    redactor: Redactor
    since: datetime | None = None
    items: list[dict[str, Any]] = field(default_factory=list)
    ignored: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    _perms: dict[str, str] = field(default_factory=dict)

    def text(self, value: object, limit: int = BODY_CHARS) -> str:
        s = self.redactor.redact(str(value or ""))  # before the cut: a secret cut in two is no longer found
        return s if len(s) <= limit else s[:limit] + f"\n[… cut at {limit} characters]"

    def permission(self, login: str) -> str:
        """The login's permission; `unknown` when the forge refuses to say (403/404): fail safe, ignored."""
        if login not in self._perms:
            try:
                got, _ = self.api.get(f"/repos/{self.repo}/collaborators/{login}/permission")
                self._perms[login] = str(got.get("permission") or "none")
            except ForgeError as e:
                if e.status not in (403, 404):
                    raise
                self._perms[login] = UNCHECKED
                if not self.warnings:
                    self.warnings.append(
                        f"{e.message}: whose feedback is taken cannot be checked, so no review or comment"
                        f" is taken; to take them, {GRANT}"
                    )
        return self._perms[login]

    def add(self, kind: str, raw: dict[str, Any], when: str | None, fields: dict[str, Any]) -> None:
        """One review, review comment or comment: kept when newer than the head and from write access."""
        stamp = _when(when)
        if self.since is not None and stamp is not None and stamp <= self.since:
            return
        login = str((raw.get("user") or {}).get("login") or "")
        url = str(raw.get("html_url") or "")
        why = ""
        if not login:
            why = "no author (a deleted account)"
        elif login == self.bot_login:
            why = "the bot's own"
        elif (level := self.permission(login)) == UNCHECKED:
            why = f"write access not checked: the forge refused the permission check; {GRANT}"
        elif level not in WRITE:
            why = f"no write access (permission: {level})"
        if why:
            self.ignored.append({"kind": kind, "author": login, "url": url, "reason": why})
            return
        item = {
            "id": "",
            "kind": kind,
            "author": login,
            **fields,
            "body": self.text(raw.get("body")),
            "url": url,
        }
        self.items.append(item)

    def log_of(self, run: dict[str, Any]) -> str:
        if (run.get("app") or {}).get("slug") != "github-actions":
            out = run.get("output") or {}
            said = "\n".join(str(out.get(k) or "") for k in ("title", "summary", "text")).strip()
            return self.text(said, LOG_BYTES)
        try:
            raw = self.api.log_tail(self.repo, int(run["id"]), LOG_BYTES)
        except ForgeError as e:
            return f"[log unavailable: {e.message}]"
        lines = _ANSI.sub("", raw.decode("utf-8", errors="replace")).splitlines()
        if len(raw) >= LOG_BYTES and lines:
            lines = lines[1:]  # the first line was cut in two
        return self.redactor.redact("\n".join(lines[-LOG_LINES:]))


def _head_time(api: ForgeAPI, repo: str, sha: str) -> str | None:
    """The head commit's committer date — unless it lies after the forge's own clock (its `Date` header):
    the agent sets its commits' dates, and one in the future would hide every comment. Then None: all."""
    commit, headers = api.get(f"/repos/{repo}/commits/{sha}")
    since = str(((commit.get("commit") or {}).get("committer") or {}).get("date") or "")
    try:
        now = email.utils.parsedate_to_datetime(headers.get("date") or "")
    except (TypeError, ValueError):
        return since or None
    stamp = _when(since)
    return None if stamp is None or stamp.tzinfo is None or stamp > now else since


def gather(api: ForgeAPI, repo: str, head: str, bot_login: str, redactor: Redactor) -> dict[str, Any]:
    """The feedback document for the open pull request from `head` (none: no items)."""
    owner = repo.split("/")[0]
    doc: dict[str, Any] = {
        "version": VERSION,
        "repository": repo,
        "pull_request": None,
        "items": [],
        "ignored": [],
        "warnings": [],
    }
    pulls = api.pages(f"/repos/{repo}/pulls", {"head": f"{owner}:{head}", "state": "open"})
    if not pulls:
        return doc
    pr = pulls[0]
    number, sha = int(pr["number"]), str(pr["head"]["sha"])
    since = _head_time(api, repo, sha)
    g = Gathering(api, repo, bot_login, redactor, _when(since))
    pull = {
        "number": number,
        "url": pr.get("html_url", ""),
        "head": pr["head"].get("ref", head),
        "head_sha": sha,
    }
    doc |= {"pull_request": pull, "since": since}
    for run in api.pages(f"/repos/{repo}/commits/{sha}/check-runs", key="check_runs"):
        if run.get("conclusion") in FAILED:
            fields = {"name": g.text(run.get("name"), 200), "conclusion": run["conclusion"]}
            url = run.get("html_url") or run.get("details_url") or ""
            g.items.append({"id": "", "kind": "check", **fields, "url": url, "log_tail": g.log_of(run)})
    for review in api.pages(f"/repos/{repo}/pulls/{number}/reviews"):
        state = review.get("state")
        if state == "CHANGES_REQUESTED" or (state == "COMMENTED" and (review.get("body") or "").strip()):
            g.add("review", review, review.get("submitted_at"), {"state": state})
    for c in api.pages(f"/repos/{repo}/pulls/{number}/comments"):
        where = {"path": g.text(c.get("path"), 500), "line": c.get("line") or c.get("original_line")}
        g.add("review_comment", c, c.get("updated_at") or c.get("created_at"), where)
    for c in api.pages(f"/repos/{repo}/issues/{number}/comments"):
        g.add("comment", c, c.get("updated_at") or c.get("created_at"), {})
    for n, item in enumerate(g.items, 1):
        item["id"] = f"F{n}"
    return doc | {"items": g.items, "ignored": g.ignored, "warnings": g.warnings}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="openbot.forge.gather")
    for flag in ("--repo", "--head", "--api", "--token-env", "--bot-login"):
        parser.add_argument(flag, required=True)
    a = parser.parse_args(argv)
    token = os.environ.get(a.token_env, "")
    try:
        doc = gather(
            ForgeAPI(a.api, token), a.repo, a.head, a.bot_login, Redactor.from_env(os.environ, [token])
        )
    except ForgeError as e:
        print(e.one_line(), file=sys.stderr)
        return 2
    sys.stdout.buffer.write(json.dumps(doc, ensure_ascii=False).encode())  # whatever the locale
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
