"""A bot's per-project memory: `memory.json` = `{"entries": {key: value}}`, strings only.

Every write takes an exclusive flock on the sibling `memory.json.lock`, re-reads, changes one thing and
replaces the file atomically (temp file in the same dir, fsync, `os.replace`), so concurrent runs of one
bot never lose each other's keys and a crash never leaves half a file. Reads take no lock.

A damaged file is a ConfigError naming it; nothing ever overwrites it silently. Only an explicit
`openbot memory <bot> clear --repair` moves it aside (`quarantine`) to `memory.json.corrupt-<ts>`.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from openbot import paths
from openbot.errors import ConfigError, UsageError
from openbot.files import write_atomic

MAX_KEY_CHARS = 200


def check_key(key: str) -> str:
    if not isinstance(key, str) or not key.strip():
        raise UsageError("memory key must not be empty")
    if len(key) > MAX_KEY_CHARS:
        raise UsageError(f"memory key is {len(key)} characters long", hint=f"keep keys to {MAX_KEY_CHARS}")
    if "\n" in key or "\r" in key:
        raise UsageError(
            f"memory key {key!r} contains a newline", hint="keys are one line; put text in the value"
        )
    return key


class MemoryStore:
    """The memory of one bot in one project; `path` is `paths.memory_file(bot, project)`. Creates nothing."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock_path = path.with_name(path.name + ".lock")

    def _repair_hint(self) -> str:
        # The path follows the layout bots/<bot>/workspaces/<project>/memory.json; name the exact command.
        if self.path.parent.parent.name != "workspaces":
            return "fix or delete it by hand, or move it aside with `openbot memory <bot> clear --repair`"
        project, bot = self.path.parent.name, self.path.parent.parent.parent.name
        return (
            f"fix or delete it by hand, or run `openbot memory {bot} clear --repair --project {project}` "
            "to move it aside and start empty"
        )

    def _corrupt(self, what: str) -> ConfigError:
        return ConfigError(f"memory file {self.path} is damaged: {what}", hint=self._repair_hint())

    def load(self) -> dict[str, str]:
        """Every entry; {} when the file does not exist. A damaged file raises ConfigError."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return {}
        try:
            data: Any = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as e:
            raise self._corrupt(f"not valid JSON ({e})") from None
        if not isinstance(data, dict) or not isinstance(data.get("entries"), dict):
            raise self._corrupt('expected an object {"entries": {key: value}}')
        entries = data["entries"]
        for key, value in entries.items():
            if not isinstance(value, str):
                raise self._corrupt(f"the value of {key!r} is {type(value).__name__}, not a string")
        return dict(entries)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        paths.make_private_dir(self.path.parent)
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the lock

    def _write(self, entries: dict[str, str]) -> None:
        write_atomic(self.path, json.dumps({"entries": entries}, ensure_ascii=False, indent=2) + "\n")

    def set(self, key: str, value: str) -> None:
        check_key(key)
        if not isinstance(value, str):
            raise UsageError(f"memory value of {key!r} must be a string, got {type(value).__name__}")
        with self._locked():
            entries = self.load()
            entries[key] = value
            self._write(entries)

    def remove(self, key: str) -> bool:
        """Delete one key; False when it was not there (the file is then left as it was)."""
        with self._locked():
            entries = self.load()
            if key not in entries:
                return False
            del entries[key]
            self._write(entries)
            return True

    def clear(self) -> int:
        """Delete every entry; returns how many there were."""
        if not self.path.exists():
            return 0
        with self._locked():
            entries = self.load()
            if entries:
                self._write({})
            return len(entries)

    def quarantine(self) -> Path:
        """Move the (damaged) file aside to `memory.json.corrupt-<ts>` and return where it went."""
        with self._locked():
            if not self.path.exists():
                raise UsageError(f"no memory file at {self.path}")
            stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")
            target = self.path.with_name(f"{self.path.name}.corrupt-{stamp}")
            os.replace(self.path, target)
            return target
