"""The files git itself reads from a checkout (`.gitignore`, `.gitattributes`), made safe to read before
openbot stages the bot's work.

libgit2 (like git before 2.32) opens them by name and reads them to the end, following a symlink: a FIFO
named `.gitignore` — or a link to one, to `/dev/zero`, to a device — blocks or never ends, and the WIP
commit with it, so a run would never finish. Any such entry is renamed to `<name>.openbot-unreadable`
before staging: a FIFO, socket or device holds no content, a symlink keeps its target under the new name
(and is committed as a link), and the WIP commit's message names each one.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

NAMES = (".gitignore", ".gitattributes")
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
