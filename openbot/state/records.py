"""openbot's small JSON records (run.json, metadata.json): atomic, and still writable on a full disk."""

from __future__ import annotations

import errno
import os
from pathlib import Path

from openbot.files import write_atomic

RESERVE = 4096  # records are padded to whole blocks, so a full disk can still take their final state


def write_record(path: Path, text: str, *, final: bool = False) -> None:
    """`write_atomic`, padded with spaces to whole 4 KiB blocks. A `final` write on a full disk (ENOSPC,
    EDQUOT) rewrites the file in place within the blocks it already has: a run's final state (failed, its
    WIP commit) is recorded even then. Otherwise, and when that does not fit either, the OSError is raised
    (mid-run, a full disk ends the run)."""
    body = text.encode("utf-8")
    size = -(-(len(body) + 1) // RESERVE) * RESERVE
    try:
        write_atomic(path, body.ljust(size - 1) + b"\n")
    except OSError as e:
        if not final or e.errno not in (errno.ENOSPC, errno.EDQUOT) or not _rewrite_in_place(path, body):
            raise


def _rewrite_in_place(path: Path, body: bytes) -> bool:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        size = os.fstat(fd).st_size
        if len(body) + 1 > size:
            return False
        os.pwrite(fd, body.ljust(size - 1) + b"\n", 0)
        os.fsync(fd)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)
