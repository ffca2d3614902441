"""Writing openbot's own files: user-only (0600) and atomic — a crash leaves the old file or the new one."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


def _fsync_dir(path: Path) -> None:
    """Make a rename durable (the directory entry), not just the file's bytes."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, data: str | bytes) -> None:
    """Replace `path` with `data` at once (mode 0600): temp file beside it, fsync, rename, fsync the dir."""
    import tempfile  # only writers pay for it; `memory show` does not

    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        _fsync_dir(path.parent)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
