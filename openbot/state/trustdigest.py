"""What `openbot trust` hashes: everything a loader can read below a committed directory, links included.

A symlink counts by its target text and then by what it leads to — a file's content, a directory's files —
so `skills -> ../../../docs/cbskills` needs trust again when a skill behind it changes. Nothing is ever
followed out of the repository or opened when it is not a regular file: a link out of the repository, a
symlink loop, a FIFO or a device (reading `/proc/kmsg` or a FIFO blocks) are refused with one line naming
the file, before anything reads it. A tree without links to directories hashes as it always did.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from openbot.errors import ConfigError
from openbot.files import open_beneath

if TYPE_CHECKING:
    from hashlib import _Hash

MAX_ENTRIES = 10_000  # entries below one committed directory, links followed
FILE_LIMIT = 64 * 1024 * 1024  # bytes of one file
_CHUNK = 1 << 16
_FIX = "replace the link (or file) with a regular file inside the repository"


def digest(root: Path, repo_root: Path) -> str:
    """sha256 over every file below `root` (relative path and content; a symlink by its target text, then
    by what it leads to), "" if `root` does not exist. ConfigError (exit 2) naming the file for what a
    committed directory may not hold (see the module docstring)."""
    if not root.is_dir():
        return ""
    h = hashlib.sha256()
    real_repo = os.path.realpath(repo_root)
    try:
        _walk(root, (), (_inside(root, real_repo, root),), real_repo, h, [0])
    except OSError as e:  # unreadable (another user's file), or changed while walked
        raise ConfigError(
            f"{e.filename or root}: cannot read: {e.strerror}", hint="fix its permissions"
        ) from e
    return h.hexdigest()


def _inside(path: Path, real_repo: str, shown: Path) -> str:
    """The real path of `path`, refused when it leads out of the repository."""
    real = os.path.realpath(path)
    if os.path.commonpath([real_repo, real]) != real_repo:
        raise ConfigError(
            f"{shown}: refused: a symlink out of the repository (to {real}); openbot never follows one",
            hint=_FIX,
        )
    return real


def _walk(
    d: Path, rel: tuple[str, ...], stack: tuple[str, ...], real_repo: str, h: _Hash, count: list[int]
) -> None:
    """Hash the entries of directory `d` (`stack`: the real paths of the directories being walked, `d`'s
    last) in the order the old digest used: a pre-order walk by sorted names is sorted relative paths."""
    for name in sorted(os.listdir(d)):
        count[0] += 1
        if count[0] > MAX_ENTRIES:
            raise ConfigError(
                f"{d}: more than {MAX_ENTRIES} files to hash below it", hint="trust a smaller tree"
            )
        path, key = d / name, "/".join((*rel, name)).encode()
        mode = os.lstat(path).st_mode
        if stat.S_ISLNK(mode):
            h.update(b"L\0" + key + b"\0" + os.fsencode(os.readlink(path)) + b"\0")
            real = _inside(path, real_repo, path)
            if not os.path.exists(real):
                continue  # dangling: nothing can load it
            mode = os.stat(real).st_mode
            if stat.S_ISDIR(mode):
                if real in stack:
                    raise ConfigError(f"{path}: refused: a symlink loop (to {real})", hint=_FIX)
                _walk(path, (*rel, name), (*stack, real), real_repo, h, count)
                continue
        elif stat.S_ISDIR(mode):
            _walk(path, (*rel, name), (*stack, os.path.join(stack[-1], name)), real_repo, h, count)
            continue
        _hash_file(path, key, Path(real_repo), h)


def _hash_file(path: Path, key: bytes, repo: Path, h: _Hash) -> None:
    """One regular file inside the repository, read without following a link out or blocking."""
    fd = open_beneath(path, repo)  # ConfigError for a FIFO, a device, a link swapped in meanwhile
    try:
        size = os.fstat(fd).st_size
        if size > FILE_LIMIT:
            raise ConfigError(
                f"{path}: refused: larger than {FILE_LIMIT >> 20} MB", hint="keep big files out of .openbot/"
            )
        h.update(b"F\0" + key + b"\0" + str(size).encode() + b"\0")
        left = size
        while left > 0:
            chunk = os.read(fd, min(left, _CHUNK))
            if not chunk:
                raise ConfigError(f"{path}: changed while openbot hashed it", hint="run the command again")
            h.update(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
