"""The skills.sh registry, as the Rust openbot used it: `skills search <query>` and `skills install
owner/repo/skill` (its SKILL.md fetched from GitHub's raw content, multi-skill layout first), pinned: the
repository's HEAD commit is asked of GitHub's API first, and the text is fetched at that commit, so what
the user approves (skills_cmd shows it) is what is installed, and the commit is recorded.

The addresses can be moved with OPENBOT_SKILLS_REGISTRY, OPENBOT_SKILLS_API and OPENBOT_SKILLS_RAW (a
mirror, or a loopback server in tests). What is fetched is installed exactly like a local skill folder
(skill_install), so the same checks apply: it must parse as a skill, and nothing is written through a
link.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openbot.errors import NotFoundError, OpenbotError, UsageError

REGISTRY = "https://skills.sh"
API = "https://api.github.com"
RAW = "https://raw.githubusercontent.com"
_SHA_RE = re.compile(r"^[0-9a-f]{40}$")
SKILL_ID_RE = re.compile(r"^([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)$")
TIMEOUT_SECS = 30.0
MAX_SKILL_BYTES = 1024 * 1024


@dataclass(frozen=True)
class Remote:
    """Where skills came from over the network: installed only once the user approved their text."""

    source: str  # as the user named it
    url: str  # what was fetched
    commit: str  # the commit the text is from


@dataclass(frozen=True)
class Found:
    id: str
    installs: int


def registry_id(source: str) -> tuple[str, str] | None:
    """(owner/repo, skill) when `source` is a registry identifier and not a path that exists here."""
    m = SKILL_ID_RE.match(source)
    if m is None or os.path.lexists(source) or ".." in source.split("/"):
        return None
    return m.group(1), m.group(2)


def _get(url: str, moved_by: str) -> Any:
    """GET `url`; `moved_by` is the variable that moves its address (named when it cannot be reached)."""
    import httpx2

    try:
        return httpx2.get(url, timeout=TIMEOUT_SECS, follow_redirects=True)
    except httpx2.HTTPError as e:
        raise OpenbotError(f"could not reach {url}: {e}", hint=f"check your network (or {moved_by})") from e


def search(query: str, limit: int) -> tuple[int, list[Found]]:
    """(total matches, the first `limit`) from the registry's search API."""
    import urllib.parse

    base = os.environ.get("OPENBOT_SKILLS_REGISTRY", REGISTRY).rstrip("/")
    q = urllib.parse.urlencode({"q": query, "limit": limit})
    resp = _get(f"{base}/api/search?{q}", "OPENBOT_SKILLS_REGISTRY")
    if resp.status_code != 200:
        raise OpenbotError(f"the skills registry answered {resp.status_code} to a search for {query!r}")
    try:
        body = resp.json()
        skills = [Found(str(s["id"]), int(s.get("installs", 0))) for s in body["skills"]]
        return int(body.get("count", len(skills))), skills[:limit]
    except (ValueError, KeyError, TypeError) as e:
        raise OpenbotError(f"the skills registry's answer to {query!r} is not a search result ({e})") from e


def _head_commit(source: str, skill: str) -> str:
    """The commit owner/repo's default branch is at now: what the skill is pinned to."""
    url = f"{os.environ.get('OPENBOT_SKILLS_API', API).rstrip('/')}/repos/{source}/commits/HEAD"
    resp = _get(url, "OPENBOT_SKILLS_API")
    if resp.status_code == 404:
        raise NotFoundError(f"no SKILL.md for {skill} in {source} ({url} answered 404)")
    try:
        sha = str(resp.json()["sha"]) if resp.status_code == 200 else ""
    except (ValueError, KeyError, TypeError):
        sha = ""
    if not _SHA_RE.match(sha):
        raise OpenbotError(f"{url} did not name a commit (answered {resp.status_code}): nothing installed")
    return sha


def fetch(source: str, skill: str, into: Path) -> tuple[Path, Remote]:
    """Download owner/repo's SKILL.md for `skill`, at the commit its default branch is at, into
    `into/<skill>/SKILL.md`; return that folder and where it came from."""
    commit = _head_commit(source, skill)
    base = os.environ.get("OPENBOT_SKILLS_RAW", RAW).rstrip("/")
    tried = [f"{base}/{source}/{commit}/skills/{skill}/SKILL.md", f"{base}/{source}/{commit}/SKILL.md"]
    for url in tried:
        resp = _get(url, "OPENBOT_SKILLS_RAW")
        if resp.status_code == 200:
            if len(resp.content) > MAX_SKILL_BYTES:
                raise UsageError(f"{url} is over {MAX_SKILL_BYTES // 1024} KiB: not a skill file")
            folder = into / skill
            folder.mkdir(parents=True)
            (folder / "SKILL.md").write_bytes(resp.content)
            return folder, Remote(f"{source}/{skill}", url, commit)
    raise NotFoundError(
        f"no SKILL.md for {skill} in {source} (tried {', '.join(tried)})",
        hint="`openbot skills search <words>` lists the registry's ids",
    )


PINS = ".pins.json"


def record_pins(dest: int, names: list[str], remote: Remote) -> None:
    """Each skill's source and commit in `dest`'s .pins.json (written as the skills are: a fresh temp
    file renamed into place, never through a link)."""
    import json
    import secrets

    try:
        fd = os.open(PINS, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dest)
        with os.fdopen(fd, "rb") as f:
            pins = json.loads(f.read(MAX_SKILL_BYTES))
        pins = pins if isinstance(pins, dict) else {}
    except (OSError, ValueError):
        pins = {}
    pins.update({n: {"source": remote.source, "url": remote.url, "commit": remote.commit} for n in names})
    tmp = f".{PINS}.{secrets.token_hex(4)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    with os.fdopen(os.open(tmp, flags, 0o600, dir_fd=dest), "w", encoding="utf-8") as f:
        json.dump(pins, f, indent=2, sort_keys=True)
    os.rename(tmp, PINS, src_dir_fd=dest, dst_dir_fd=dest)
