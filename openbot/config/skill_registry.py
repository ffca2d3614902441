"""The skills.sh registry, as the Rust openbot used it: `skills search <query>` and `skills install
owner/repo/skill` (its SKILL.md fetched from GitHub's raw content, multi-skill layout first).

Both addresses can be moved with OPENBOT_SKILLS_REGISTRY and OPENBOT_SKILLS_RAW (a mirror, or a loopback
server in tests). What is fetched is installed exactly like a local skill folder (skill_install), so the
same checks apply: it must parse as a skill, and nothing is written through a link.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openbot.errors import NotFoundError, OpenbotError, UsageError

REGISTRY = "https://skills.sh"
RAW = "https://raw.githubusercontent.com"
SKILL_ID_RE = re.compile(r"^([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)$")
TIMEOUT_SECS = 30.0
MAX_SKILL_BYTES = 1024 * 1024


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


def _get(url: str) -> Any:
    import httpx2

    try:
        return httpx2.get(url, timeout=TIMEOUT_SECS, follow_redirects=True)
    except httpx2.HTTPError as e:
        raise OpenbotError(
            f"could not reach {url}: {e}", hint="check your network (or OPENBOT_SKILLS_REGISTRY)"
        ) from e


def search(query: str, limit: int) -> tuple[int, list[Found]]:
    """(total matches, the first `limit`) from the registry's search API."""
    import urllib.parse

    base = os.environ.get("OPENBOT_SKILLS_REGISTRY", REGISTRY).rstrip("/")
    q = urllib.parse.urlencode({"q": query, "limit": limit})
    resp = _get(f"{base}/api/search?{q}")
    if resp.status_code != 200:
        raise OpenbotError(f"the skills registry answered {resp.status_code} to a search for {query!r}")
    try:
        body = resp.json()
        skills = [Found(str(s["id"]), int(s.get("installs", 0))) for s in body["skills"]]
        return int(body.get("count", len(skills))), skills[:limit]
    except (ValueError, KeyError, TypeError) as e:
        raise OpenbotError(f"the skills registry's answer to {query!r} is not a search result ({e})") from e


def fetch(source: str, skill: str, into: Path) -> Path:
    """Download owner/repo's SKILL.md for `skill` into `into/<skill>/SKILL.md`; return that folder."""
    base = os.environ.get("OPENBOT_SKILLS_RAW", RAW).rstrip("/")
    tried = [f"{base}/{source}/main/skills/{skill}/SKILL.md", f"{base}/{source}/main/SKILL.md"]
    for url in tried:
        resp = _get(url)
        if resp.status_code == 200:
            if len(resp.content) > MAX_SKILL_BYTES:
                raise UsageError(f"{url} is over {MAX_SKILL_BYTES // 1024} KiB: not a skill file")
            folder = into / skill
            folder.mkdir(parents=True)
            (folder / "SKILL.md").write_bytes(resp.content)
            return folder
    raise NotFoundError(
        f"no SKILL.md for {skill} in {source} (tried {', '.join(tried)})",
        hint="`openbot skills search <words>` lists the registry's ids",
    )
