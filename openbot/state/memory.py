"""A bot's per-project memory: `memory.json` = `{"entries": {key: value}}`, strings only.

Every write takes an exclusive flock on the sibling `memory.json.lock`, re-reads, changes one thing and
replaces the file atomically (temp file in the same dir, fsync, `os.replace`), so concurrent runs of one
bot never lose each other's keys and a crash never leaves half a file. Reads take no lock.

A damaged file is a ConfigError naming it; nothing ever overwrites it silently. Only an explicit
`openbot memory <bot> clear --repair` moves it aside (`quarantine`) to `memory.json.corrupt-<ts>`.

Memory is in every iteration's prompt, so it is capped: a note holds NOTE_LIMIT bytes and the memory
MEMORY_LIMIT bytes (keys and values, UTF-8); `set` refuses more, saying so. `for_prompt` caps what a
memory written before these limits (or by hand) puts in a prompt; the file is read at most FILE_LIMIT.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from openbot import paths
from openbot.errors import ConfigError, UsageError
from openbot.files import loads_strict, locked, read_capped, write_atomic

MAX_KEY_CHARS = 200
NOTE_LIMIT = 4 * 1024
MEMORY_LIMIT = 32 * 1024
FILE_LIMIT = 4 * 1024 * 1024  # far above what the caps allow in JSON; only a damaged file is larger
LEFT_OUT_KEY = "(left out by openbot)"


def _size(key: str, value: str) -> int:
    return len(key.encode("utf-8")) + len(value.encode("utf-8"))


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
            raw, cut = read_capped(self.path, root=self.path.parent, limit=FILE_LIMIT)
        except FileNotFoundError:
            return {}
        except ConfigError as e:  # a link out of its directory, a FIFO, ...
            raise self._corrupt(e.message.removeprefix(f"{self.path}: ")) from None
        if cut:
            raise self._corrupt(f"it is larger than {FILE_LIMIT // (1024 * 1024)} MB")
        try:
            data: object = loads_strict(raw)
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
        with locked(self.lock_path):
            yield

    def _write(self, entries: dict[str, str]) -> None:
        write_atomic(self.path, json.dumps({"entries": entries}, ensure_ascii=False, indent=2) + "\n")

    def for_prompt(self) -> dict[str, str]:
        """The entries as a prompt shows them: each note cut at NOTE_LIMIT, all within MEMORY_LIMIT.

        Notes past the limit are left out and an entry LEFT_OUT_KEY says which, so the model can trim them."""
        shown: dict[str, str] = {}
        left_out: list[str] = []
        used = 0
        for key, value in self.load().items():
            if len(value.encode("utf-8")) > NOTE_LIMIT:
                cut = value.encode("utf-8")[:NOTE_LIMIT].decode("utf-8", "ignore")
                value = f"{cut} [... cut at {NOTE_LIMIT // 1024} kB; shorten this note]"
            if used + _size(key, value) > MEMORY_LIMIT:
                left_out.append(key)
                continue
            shown[key] = value
            used += _size(key, value)
        if left_out:
            names = ", ".join(repr(k) for k in left_out[:20]) + (" ..." if len(left_out) > 20 else "")
            shown[LEFT_OUT_KEY] = (
                f"{len(left_out)} notes are not shown, as memory is shown up to {MEMORY_LIMIT // 1024} kB: "
                f"{names}; remove or shorten notes"
            )
        return shown

    def set(self, key: str, value: str) -> None:
        """Save one note; over NOTE_LIMIT, or growing the memory past MEMORY_LIMIT, is a UsageError."""
        check_key(key)
        if not isinstance(value, str):
            raise UsageError(f"memory value of {key!r} must be a string, got {type(value).__name__}")
        if len(value.encode("utf-8")) > NOTE_LIMIT:
            raise UsageError(
                f"memory note {key!r} is {len(value.encode('utf-8')):,} bytes; a note holds at most "
                f"{NOTE_LIMIT // 1024} kB",
                hint="keep the facts a later session needs, or split them over several keys",
            )
        with self._locked():
            entries = self.load()
            before = sum(_size(k, v) for k, v in entries.items())
            after = before - (_size(key, entries[key]) if key in entries else 0) + _size(key, value)
            if after > MEMORY_LIMIT and after > before:  # a memory over the limit may still shrink
                raise UsageError(
                    f"memory is full: saving {key!r} would make it {after:,} bytes; memory holds at most "
                    f"{MEMORY_LIMIT // 1024} kB",
                    hint="remove notes that are no longer true, or shorten some",
                )
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

    def clear(self) -> tuple[int, Path | None]:
        """Delete every entry, keeping a copy first (`memory.json.bak-<ts>`): how many there were, and the
        copy (None when there was nothing to clear)."""
        if not self.path.exists():
            return 0, None
        with self._locked():
            entries = self.load()
            if not entries:
                return 0, None
            stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")
            backup = self.path.with_name(f"{self.path.name}.bak-{stamp}")
            write_atomic(backup, json.dumps({"entries": entries}, ensure_ascii=False, indent=2) + "\n")
            self._write({})
            return len(entries), backup

    def quarantine(self) -> Path:
        """Move the (damaged) file aside to `memory.json.corrupt-<ts>` and return where it went."""
        with self._locked():
            if not self.path.exists():
                raise UsageError(f"no memory file at {self.path}")
            stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S.%fZ")
            target = self.path.with_name(f"{self.path.name}.corrupt-{stamp}")
            os.replace(self.path, target)
            return target
