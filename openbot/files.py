"""openbot's own file I/O where the agent may have been first.

Writing: user-only (0600) and atomic — a crash leaves the old file or the new one.

Reading: every file openbot reads from a place the agent can write (skills, AGENTS.md/CLAUDE.md, memory,
bot configs) goes through `read_capped`, so a planted file cannot make openbot read its own secrets
(`ln -s /proc/self/environ AGENTS.md`), hang (a FIFO, /proc/kmsg) or load gigabytes (a sparse file):
symlinks may not lead out of `root`, no component is followed after the check, the file must be regular,
and at most `limit` bytes are read.
"""

from __future__ import annotations

import codecs
import contextlib
import fcntl
import json
import os
import stat
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from openbot.errors import ConfigError

_DIR_NOFOLLOW = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: opening a FIFO or a device must not wait for a writer; it is then refused as not regular.
_FILE_NOFOLLOW = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_CHUNK = 1 << 16


_SUPERSEDED = threading.local()


@contextlib.contextmanager
def superseded() -> Iterator[None]:
    """Records written in here (this thread) are written again, durably, before openbot exits (the
    session that ends a run, then the run's end): they are not fsynced. A crash of openbot still finds
    them whole in the page cache; only the machine's crash in those milliseconds loses them."""
    _SUPERSEDED.on = True
    try:
        yield
    finally:
        _SUPERSEDED.on = False


def _fsync_dir(path: Path) -> None:
    """Make a rename durable (the directory entry), not just the file's bytes."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on the file `path` (made user-only): released when the block ends, or when
    the process dies, so a crashed holder never blocks the next one."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def write_atomic(path: Path, data: str | bytes) -> None:
    """Replace `path` with `data` at once (mode 0600): temp file beside it, fsync, rename, fsync the dir."""
    import tempfile  # only writers pay for it; `memory show` does not

    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        durable = not getattr(_SUPERSEDED, "on", False)
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
            f.flush()
            if durable:
                os.fsync(f.fileno())
        os.replace(tmp, path)
        if durable:
            _fsync_dir(path.parent)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISLNK, "a symlink"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def open_beneath(path: Path, root: Path) -> int:
    """A read-only fd of the regular file `path`, which must lie inside `root` once symlinks are resolved.

    Symlinks inside `root` are fine (CLAUDE.md -> AGENTS.md); one that leads out is refused. The resolved
    path is then walked down from `root` with O_NOFOLLOW, so a link swapped in after the check is refused
    too rather than followed. FileNotFoundError when there is nothing there; ConfigError when refused."""
    real_root = os.path.realpath(root)
    real = os.path.realpath(path)
    if os.path.commonpath([real_root, real]) != real_root or real == real_root:
        raise ConfigError(
            f"{path}: refused to read: it is a symlink out of {root} (to {real})",
            hint="openbot reads only files inside that directory; replace the link with the file itself",
        )
    *dirs, name = Path(os.path.relpath(real, real_root)).parts
    fd = os.open(real_root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in dirs:
            below = os.open(part, _DIR_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = below
        mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
        if not stat.S_ISREG(mode):  # checked before opening: opening a device can have effects
            raise ConfigError(f"{path}: refused to read: it is {_kind(mode)}, not a regular file")
        out = os.open(name, _FILE_NOFOLLOW, dir_fd=fd)
    except OSError as e:
        if isinstance(e, FileNotFoundError):
            raise
        raise ConfigError(f"{path}: cannot read: {e.strerror} (was it changed while openbot read it?)") from e
    finally:
        os.close(fd)
    mode = os.fstat(out).st_mode
    if not stat.S_ISREG(mode):  # swapped between the check and the open
        os.close(out)
        raise ConfigError(f"{path}: refused to read: it is {_kind(mode)}, not a regular file")
    return out


def read_capped(path: Path, *, root: Path, limit: int) -> tuple[bytes, bool]:
    """(at most `limit` bytes of `path`, whether there was more) — never more than `limit` + 1 is read.

    Raises FileNotFoundError when `path` does not exist, ConfigError when it is refused (see open_beneath)."""
    fd = open_beneath(path, root)
    chunks: list[bytes] = []
    left = limit + 1
    try:
        while left > 0:
            chunk = os.read(fd, min(left, _CHUNK))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror}") from e
    finally:
        os.close(fd)
    data = b"".join(chunks)
    return data[:limit], len(data) > limit


def read_text_capped(path: Path, *, root: Path, limit: int, errors: str = "strict") -> tuple[str, bool]:
    """(the UTF-8 text of at most `limit` bytes of `path`, whether it was cut); a BOM is dropped and line
    ends are read as `open()` reads them (\r\n and \r become \n).

    A character split by the cut is dropped; with errors="strict" bad UTF-8 is a ConfigError."""
    data, cut = read_capped(path, root=root, limit=limit)
    decoder = codecs.getincrementaldecoder("utf-8-sig")(errors)
    try:
        text = decoder.decode(data, final=not cut)
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: not UTF-8 text", hint="save the file as UTF-8") from e
    return text.replace("\r\n", "\n").replace("\r", "\n"), cut


def read_user_text(path: Path, *, root: Path, limit: int, what: str = "file") -> str:
    """A whole file the user (or the agent) wrote, strict UTF-8, refused with one line when over `limit`."""
    try:
        text, cut = read_text_capped(path, root=root, limit=limit)
    except FileNotFoundError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror}") from e
    if cut:
        raise ConfigError(
            f"{path}: refused to read: the {what} is larger than {limit // 1024} kB",
            hint=f"openbot reads a {what} of up to {limit // 1024} kB; shorten it",
        )
    return text


def _not_a_number(name: str) -> object:
    raise ValueError(f"{name} is not a number openbot writes")


def loads_strict(data: bytes | str) -> Any:
    """JSON as openbot writes it: Python's parser also takes NaN and ±Infinity, which no openbot record
    holds and which crash whatever formats them (`int(inf)`); ValueError for them, as for bad UTF-8."""
    return json.loads(data, parse_constant=_not_a_number)
