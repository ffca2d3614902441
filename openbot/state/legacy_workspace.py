"""The Rust openbot's per-project state, found and adopted (docs/LEGACY.md).

The Rust tool (montanaflynn/openbot at cf3b7f2: src/workspace.rs, docs/MEMORY_FORMAT.md) kept a bot's
memory and history in `bots/<bot>/workspaces/<slug>/`, the slug being the checkout's directory name
lowercased with every other character than [a-z0-9-] a hyphen. openbot keys the same directory by the
repository (`openbot.state.project`: `<name>-<hash of origin or git dir>`), so after the switch a repository
would start empty. Here, when this repository's own directory does not exist yet but the directory-name
one does, that state is used:

- `openbot run` adopts it: the directory is MOVED to this repository's key (one rename; the files are the
  same formats, and the history reader lists the Rust sessions), and a marker `<slug>.adopted.json` is
  left at the old name saying which repository took it. A later repository with the same directory name
  finds the marker and is told, in one line, that it starts with its own state: never a silent merge.
- `memory` and `history` before the first run read (and `memory set` writes) the Rust directory in place,
  saying so in one line.

Only a directory that openbot did not make itself (no `runs/` inside) is adopted; `--project` and
`--resume` name their directory exactly and adopt nothing.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from openbot import paths
from openbot.files import locked, write_atomic
from openbot.state.project import Project

MARKER = ".adopted.json"


def rust_slug(name: str) -> str:
    """`slug_from_path` of the Rust tool: lowercase, [a-z0-9-] kept, the rest '-', runs collapsed, trimmed."""
    slug = "".join(c if (c.isascii() and c.isalnum()) or c == "-" else "-" for c in name.lower())
    return re.sub("-{2,}", "-", slug.strip("-"))


@dataclass(frozen=True)
class Legacy:
    """The Rust state of a project: `path` to adopt, or (with `taken_by`) a marker: it went elsewhere."""

    bot: str
    project: Project
    slug: str  # the Rust directory name
    path: Path  # workspaces/<slug>
    taken_by: str = ""  # the identity that adopted it; "" when it is there to adopt
    taken_slug: str = ""

    def view_note(self) -> str:
        if self.taken_by:
            return self.taken_note()
        return (
            f"note: showing the Rust openbot's state in {self.path} (the first `openbot run {self.bot}` "
            f"here adopts it as {self.project.slug})"
        )

    def taken_note(self) -> str:
        again = (
            f"; {self.path} holds newer Rust state: move it by hand if it is this one's"
            if self.path.is_dir()
            else ""
        )
        return (
            f"note: the Rust openbot's state for directories named '{self.slug}' was adopted by "
            f"{self.taken_by} ({self.taken_slug}); this repository starts with its own{again}"
        )


def _dir_names(project: Project) -> list[str]:
    if project.identity == "--project":
        return []
    if project.repo is None:
        return [Path(project.identity).name]
    return list(dict.fromkeys([project.repo.workdir.name, project.repo.main_root.name]))


def find(bot: str, project: Project) -> Legacy | None:
    """The Rust state this project would take over, when its own directory does not exist yet."""
    workspaces = paths.bot_home(bot) / "workspaces"
    if os.path.lexists(workspaces / project.slug):
        return None
    for name in _dir_names(project):
        slug = rust_slug(name)
        if not slug or slug == project.slug:
            continue
        path = workspaces / slug
        marker = _read_marker(workspaces / (slug + MARKER))
        if marker is not None:
            return Legacy(bot, project, slug, path, marker[0] or "another repository", marker[1])
        if path.is_dir() and not path.is_symlink() and not (path / "runs").exists():
            return Legacy(bot, project, slug, path)
    return None


def _read_marker(path: Path) -> tuple[str, str] | None:
    try:
        data = json.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValueError, UnicodeDecodeError):
        return "", "?"  # damaged: still taken, never adopted twice
    if not isinstance(data, dict):
        return "", "?"
    return str(data.get("identity", "")), str(data.get("slug", "?"))


def view_slug(bot: str, project: Project) -> tuple[str, str | None]:
    """(the workspace `memory`/`history` read, a note to print) — the Rust directory until a run adopts it."""
    found = find(bot, project)
    if found is None:
        return project.slug, None
    return (project.slug if found.taken_by else found.slug), found.view_note()


def adopt(bot: str, project: Project) -> str | None:
    """Move the Rust state to this project's key (what `openbot run` does first); the one line that says so.

    A damaged memory.json there is a ConfigError before anything moves."""
    from openbot.state.memory import MemoryStore

    found = find(bot, project)
    if found is None:
        return None
    if found.taken_by:
        return found.taken_note()
    MemoryStore(found.path / "memory.json").load()
    workspaces = found.path.parent
    with locked(workspaces / ".adopt.lock"):
        again = find(bot, project)  # another run may have been first
        if again is None or again.taken_by or again.path != found.path:
            return again.taken_note() if again is not None and again.taken_by else None
        target = paths.workspace_dir(bot, project.slug)
        os.rename(found.path, target)
        marker = {"identity": project.identity, "slug": project.slug, "by": "openbot run",
                  "at": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")}  # fmt: skip
        write_atomic(workspaces / (found.slug + MARKER), json.dumps(marker, indent=2) + "\n")
    return (
        f"adopted the Rust openbot's state of this project: moved {found.path} to {target} (keyed by this "
        f"repository; {found.slug}{MARKER} says where it went){_keep_old_keys(target / 'memory.json')}"
    )


def _keep_old_keys(path: Path) -> str:
    """A memory.json from before the Rust tool's commit 5cf6d03 also holds a `history` list, which openbot's
    next write of the memory would drop: a copy beside it keeps the file as it was (said in the notice)."""
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError, UnicodeDecodeError):
        return ""  # none (load() checked any there is)
    other = sorted(set(data) - {"entries"}) if isinstance(data, dict) else []
    if not other:
        return ""
    copy = path.with_name(path.name + ".rust-openbot")
    write_atomic(copy, path.read_bytes())
    return f"; its memory.json also holds {', '.join(other)}, which openbot does not use: kept in {copy.name}"


def run_notices(bot: str, project: Project) -> list[str]:
    """What `openbot run` says and does first about the Rust openbot's state: the adoption, the offer to
    import the bot's global memory."""
    from openbot.state.legacy_memory import pending
    from openbot.state.memory import MemoryStore

    adopted = adopt(bot, project)
    offer = pending(bot, MemoryStore(paths.memory_file(bot, project.slug)))
    return [line for line in (adopted, offer) if line]
