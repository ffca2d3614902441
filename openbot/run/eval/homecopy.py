"""eval's copy of a bot's directory (and the global skills) into a task's fresh OPENBOT_HOME.

The bot's directory is partly the agent's: its skills dir is writable to every run of the bot. So the copy
follows no link and opens nothing but regular files (`O_NOFOLLOW | O_NONBLOCK`, checked with fstat): a
link that stays inside the directory is copied as a relative link to the same file of the copy (never
back into the user's directory), a link out of it, a FIFO, a socket or a device is left out and named.
The copy is bounded: past MAX_BYTES or MAX_ENTRIES it stops with one line saying which directory is too
big.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from openbot.errors import UsageError

MAX_BYTES = 100 << 20  # config, script and skills; a bot's directory holding more is a mistake
MAX_ENTRIES = 20_000
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_CHUNK = 1 << 16


@dataclass
class Copy:
    """One copy's running totals and what it left out (paths relative to the directory copied)."""

    source: Path
    skip_names: frozenset[str] = frozenset()  # top-level names not copied (the bot's workspaces)
    bytes: int = 0
    entries: int = 0
    left_out: list[str] = field(default_factory=list)


def copy_tree(source: Path, dest: Path, skip_names: frozenset[str] = frozenset()) -> list[str]:
    """Copy `source` to `dest` (made here) as described above; returns what was left out, each as
    "<relative path> (why)". UsageError when the directory is over the bounds."""
    job = Copy(source, skip_names)
    _copy_dir(job, source, dest, top=True)
    return job.left_out


def _copy_dir(job: Copy, src: Path, dest: Path, top: bool = False) -> None:
    dest.mkdir(mode=0o700)
    with os.scandir(src) as entries:
        listed = sorted(entries, key=lambda e: e.name)
    for entry in listed:
        if (top and entry.name in job.skip_names) or entry.name.endswith(".lock"):
            continue
        job.entries += 1
        if job.entries > MAX_ENTRIES:
            _too_big(job, f"more than {MAX_ENTRIES} files")
        path, rel = Path(entry.path), os.path.relpath(entry.path, job.source)
        mode = entry.stat(follow_symlinks=False).st_mode
        if stat.S_ISLNK(mode):
            _copy_link(job, path, dest / entry.name, rel)
        elif stat.S_ISDIR(mode):
            _copy_dir(job, path, dest / entry.name)
        elif stat.S_ISREG(mode):
            _copy_file(job, path, dest / entry.name, rel)
        else:
            job.left_out.append(f"{rel} ({_kind(mode)})")


def _copy_link(job: Copy, link: Path, dest: Path, rel: str) -> None:
    target = os.readlink(link)
    root = os.path.realpath(job.source)
    real = os.path.realpath(link)
    if os.path.commonpath([root, real]) != root or real == root:
        job.left_out.append(f"{rel} (a link out of the bot's directory, to {target})")
        return
    # Relative to where it lies, so that it resolves inside the copy (an absolute link would lead back
    # into the user's own directory); what it names is copied in its own right.
    os.symlink(os.path.relpath(real, os.path.realpath(link.parent)), dest)


def _copy_file(job: Copy, path: Path, dest: Path, rel: str) -> None:
    try:
        fd = os.open(path, _READ)
    except OSError as e:  # swapped for a link since it was listed (ELOOP), or unreadable
        job.left_out.append(f"{rel} (not read: {e.strerror})")
        return
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):  # swapped for a FIFO or a device since it was listed
            job.left_out.append(f"{rel} ({_kind(mode)})")
            return
        if job.bytes + os.fstat(fd).st_size > MAX_BYTES:  # said before a byte is copied (a sparse file)
            _too_big(job, f"more than {MAX_BYTES >> 20} MB")
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        with os.fdopen(os.open(dest, flags, stat.S_IMODE(mode) | 0o600), "wb") as out:
            while chunk := os.read(fd, _CHUNK):
                job.bytes += len(chunk)
                if job.bytes > MAX_BYTES:
                    _too_big(job, f"more than {MAX_BYTES >> 20} MB")
                out.write(chunk)
    finally:
        os.close(fd)


def _too_big(job: Copy, what: str) -> None:
    raise UsageError(
        f"{job.source} holds {what}: openbot eval copies it for every task",
        hint="move large files out of the bot's directory (its config, script and skills are what is copied)",
    )


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a device")):
        if test(mode):
            return name
    return "a device" if stat.S_ISBLK(mode) else "not a regular file"
