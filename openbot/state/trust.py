"""Trust in what a repository commits under `.openbot/`: its bots and its skills are code from whoever
wrote the repository, so they take effect only once the user has looked at them (`openbot trust`), in
the manner of direnv's `allow`.

    $OPENBOT_HOME/trust/<sha256(repo identity)[:16]>.json
        {"identity": "github.com/acme/app", "entries": {"bot:fixer": {"sha256": ..., ...}, "skills": {...}}}

The repository identity is the project's (its `origin` url, else its git dir: state/project.py), and each
entry holds the sha256 of every file it covers — a committed bot's whole directory (config, scripts, its
skills), or `.openbot/skills/`, links followed within the repository (state/trustdigest.py) — so any
change, one byte or one new file, also behind a link, needs trust again. A run reads the skills of what it
checks from the same place, the user's checkout, at the same moment (run/preflight.repo_layers).
`OPENBOT_TRUST_REPO_BOTS=1` (or `openbot run --trust-repo-bots`) trusts explicitly, for CI.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from openbot import paths
from openbot.errors import ConfigError
from openbot.files import loads_strict, write_atomic
from openbot.state.trustdigest import digest

TRUST_ENV = "OPENBOT_TRUST_REPO_BOTS"
SKILLS = "skills"  # the entry for `.openbot/skills/`; bots are "bot:<name>"


def trust_dir() -> Path:
    return paths.home() / "trust"


def env_trusts(environ: dict[str, str] | os._Environ[str] = os.environ) -> bool:
    """Whether the environment trusts every committed bot and skill (CI sets it on purpose)."""
    return environ.get(TRUST_ENV, "").strip().lower() in ("1", "true", "yes")


def bot_key(name: str) -> str:
    return f"bot:{name}"


@dataclass(frozen=True)
class Subject:
    """One thing a repository commits that needs trust: a bot's directory, or its skills directory."""

    key: str  # "bot:<name>" | "skills"
    path: Path
    sha256: str


def bot_subject(repo_root: Path, name: str) -> Subject:
    path = paths.repo_bots_dir(repo_root) / name
    return Subject(bot_key(name), path, digest(path, repo_root))


def skills_subject(repo_root: Path) -> Subject:
    path = paths.repo_skills_dir(repo_root)
    return Subject(SKILLS, path, digest(path, repo_root))


class TrustStore:
    """The trusted entries of one repository (by identity)."""

    def __init__(self, identity: str) -> None:
        self.identity = identity
        name = hashlib.sha256(identity.encode()).hexdigest()[:16]
        self.path = trust_dir() / f"{name}.json"
        self.entries: dict[str, dict[str, Any]] = {}

    @classmethod
    def load(cls, identity: str) -> TrustStore:
        store = cls(identity)
        store.entries = read_entries(store.path)
        return store

    def trusted(self, subject: Subject) -> bool:
        entry = self.entries.get(subject.key)
        return bool(subject.sha256) and entry is not None and entry.get("sha256") == subject.sha256

    def known(self, subject: Subject) -> bool:
        """Trusted once, in some earlier version."""
        return subject.key in self.entries

    def add(self, subject: Subject, **about: object) -> None:
        self.entries[subject.key] = {
            "sha256": subject.sha256,
            "path": str(subject.path),
            "trusted_at": datetime.now(UTC).isoformat(timespec="seconds"),
            **about,
        }

    def remove(self, key: str) -> bool:
        return self.entries.pop(key, None) is not None

    def save(self) -> None:
        if not self.entries:
            self.path.unlink(missing_ok=True)
            return
        paths.make_private_dir(self.path.parent)
        data = {"identity": self.identity, "entries": self.entries}
        write_atomic(self.path, json.dumps(data, indent=2) + "\n")


def read_entries(path: Path) -> dict[str, dict[str, object]]:
    """The entries of one trust file; a damaged file is a one-line error, never trust by accident."""
    try:
        data = loads_strict(path.read_bytes())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as e:
        raise ConfigError(
            f"{path}: unreadable trust record: {str(e).splitlines()[0]}",
            hint="delete it and trust again with `openbot trust`",
        ) from e
    entries = data.get("entries") if isinstance(data, dict) else None
    if not isinstance(entries, dict) or not all(
        isinstance(v, dict) and isinstance(v.get("sha256"), str) for v in entries.values()
    ):
        raise ConfigError(
            f"{path}: not a trust record openbot wrote", hint="delete it and trust again with `openbot trust`"
        )
    return entries


def all_stores() -> list[tuple[str, dict[str, dict[str, object]]]]:
    """(identity, entries) of every repository with trusted entries, for `openbot trust --list --all`."""
    found = []
    for path in sorted(trust_dir().glob("*.json")):
        try:
            data = loads_strict(path.read_bytes())
            entries = read_entries(path)
        except (ConfigError, OSError, ValueError):
            continue
        found.append((str(data.get("identity", path.stem)), entries))
    return found


def asks(values: dict[str, Any]) -> str:
    """What a bot's config asks for, in a few words: the part a user must judge before trusting it."""
    sandbox = values.get("sandbox", "workspace-write")
    parts = [f'sandbox "{sandbox}"', "network on" if values.get("network") else "network off"]
    if values.get("env_passthrough"):
        parts.append(f"env {', '.join(map(str, values['env_passthrough']))}")
    if values.get("sandbox_fallback") == "warn":
        parts.append("runs unconfined where the sandbox is unavailable")
    servers = values.get("mcp_servers")
    if isinstance(servers, dict) and servers:
        parts.append(f"MCP servers {', '.join(map(str, servers))}")
    targets = values.get("notify")
    if isinstance(targets, list) and any(isinstance(t, dict) and t.get("command") for t in targets):
        parts.append("notify commands run outside the sandbox")
    return ", ".join(parts)


def require_trusted_bot(repo_root: Path, identity: str, name: str, wants: str, explicit: bool) -> str:
    """Refuse (UsageError, exit 2) a committed bot the user has not trusted in its current version;
    returns the line that says why it may run."""
    from openbot.errors import UsageError

    subject = bot_subject(repo_root, name)  # even when trusted explicitly: a link out or a FIFO is refused
    if explicit:
        return f"trusted by --trust-repo-bots / {TRUST_ENV}=1 (it asks for {wants})"
    store = TrustStore.load(identity)
    if store.trusted(subject):
        return f"trusted with `openbot trust {name}` (sha256 {subject.sha256[:12]})"
    rel = subject.path.relative_to(repo_root) / "config.md"
    state = "changed since you trusted it" if store.known(subject) else "not trusted yet"
    raise UsageError(
        f"bot '{name}' is committed in this repository ({rel}) and {state}; it asks for {wants}",
        hint=f"review {rel.parent}/, then `openbot trust {name}` (CI: --trust-repo-bots)",
    )


def repo_skills_allowed(repo_root: Path, identity: Callable[[], str], explicit: bool) -> tuple[bool, str]:
    """Whether `.openbot/skills/` may reach the prompt, and a line to show when it may not; the repository's
    identity is worked out (git runs) only when there are skills to look up."""
    try:
        subject = skills_subject(repo_root)
    except ConfigError as e:
        return False, f"skipped the repository's skills: {e.one_line()}"
    if not subject.sha256 or explicit or TrustStore.load(identity()).trusted(subject):
        return True, ""
    return False, (
        f"skipped the repository's skills ({subject.path}): not trusted in this version; "
        "review them, then `openbot trust` (or `openbot trust <bot>`)"
    )
