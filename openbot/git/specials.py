"""The files git itself reads from a checkout (`.gitignore`, `.gitattributes`, `.lfsconfig`, `.gitmodules`)
and from a run's object store, made safe to read before openbot's own (unconfined) git reads them.

libgit2 (like git before 2.32) opens them by name and reads them to the end, following a symlink: a FIFO
named `.gitignore` — or a link to one, to `/dev/zero`, to a device — blocks or never ends, and the WIP
commit with it, so a run would never finish. Any such entry is renamed to `<name>.openbot-unreadable`
before staging: a FIFO, socket or device holds no content, a symlink keeps its target under the new name
(and is committed as a link), and the WIP commit's message names each one.

A run's object store (the agent's to write) is read by openbot's fetch through a carrier's alternates:
git opens whatever it finds there — `objects/info/alternates` naming more stores, packs, loose objects —
and a FIFO among them blocks the import (and every later run's sweep). `clear_store` removes from it
everything that is not a plain file or directory and rewrites its alternates to what openbot made.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from openbot.git.runsdir import RUNS_DIR

NAMES = (".gitignore", ".gitattributes", ".lfsconfig", ".gitmodules")
SUFFIX = ".openbot-unreadable"


def defuse(checkout: Path) -> list[str]:
    """Rename every `.gitignore`/`.gitattributes` under `checkout` that is not a regular file (or a link
    to one); returns their paths, relative to `checkout`. Repositories' own `.git` are not entered."""
    renamed: list[str] = []
    for top, dirs, files in os.walk(checkout):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in NAMES:
            if name in files:  # FIFOs, sockets, devices and links to them are listed here too
                path = Path(top) / name
                if not _readable(path):
                    os.replace(path, path.with_name(name + SUFFIX))
                    renamed.append(str(path.relative_to(checkout)))
    return renamed


def _readable(path: Path) -> bool:
    """A regular file, or a symlink whose target is one (what reading by name will find)."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return True  # a dangling link or no access: git skips a file it cannot open


def clear_store(store: Path, alternates: list[Path]) -> list[str] | None:
    """Make the object store `store` (in a run repository) safe for git to read: its alternates become
    exactly `alternates`, and every entry that is not a regular file or a directory (a FIFO, a socket, a
    device, a symlink) is removed. Returns what was removed or rewritten, relative to `store`; None when
    `store` or its `info` is itself a symlink (or not a directory): then it must not be read at all."""
    info = store / "info"
    if _linked(store) or not store.is_dir() or info.is_symlink():
        return None
    removed: list[str] = []
    for top, dirs, files in os.walk(store):
        for name in [*dirs, *files]:
            path = Path(top) / name
            mode = os.lstat(path).st_mode
            if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
                path.unlink()
                removed.append(str(path.relative_to(store)))
        dirs[:] = [d for d in dirs if os.path.isdir(Path(top) / d)]
    want = "".join(f"{p}\n" for p in alternates).encode()
    listed = info / "alternates"
    if _content(listed) != want:
        info.mkdir(exist_ok=True)
        tmp = info / f".alternates.openbot-{os.getpid()}"
        tmp.write_bytes(want)
        os.replace(tmp, listed)
        if "info/alternates" not in removed:
            removed.append("info/alternates")
    for extra in ("http-alternates",):
        if (info / extra).exists():
            (info / extra).unlink()
            removed.append(f"info/{extra}")
    return removed


def _content(path: Path) -> bytes | None:
    """The bytes of a regular file, never opening anything else (O_NOFOLLOW, O_NONBLOCK)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        return f.read(1 << 16) if stat.S_ISREG(os.fstat(fd).st_mode) else None


def planted_link(root: Path, rel: str) -> bool:
    """`root/rel` is reached through a symlink (or through something that is not a directory) below
    `root`: a path the agent could point anywhere, which openbot's unconfined steps must not open."""
    parts = Path(rel).parts
    here = root
    for i, part in enumerate(parts):
        here = here / part
        try:
            mode = os.lstat(here).st_mode
        except OSError:
            return False  # not there: nothing to open through it
        if stat.S_ISLNK(mode) or (i < len(parts) - 1 and not stat.S_ISDIR(mode)):
            return True
    return False


def _linked(store: Path) -> bool:
    """A run's store reached through a symlink below the runs directory (`<name>.git/modules` made a
    link, say); a store outside it is none of openbot's to clear: treated as linked."""
    for top in store.parents:
        if top.parent.name == RUNS_DIR:
            return top.is_symlink() or planted_link(top, str(store.relative_to(top)))
    return True
