"""The Rust openbot's global memory of a bot, imported into one project's memory (docs/LEGACY.md).

Without `--project` the Rust CLI's `openbot memory <bot> set` wrote `bots/<bot>/memory.json` (src/config.rs
`bot_memory_path` at montanaflynn/openbot cf3b7f2), `{"entries": {key: value}}` — before commit 5cf6d03
also with a `history` list of iteration records. openbot has no global memory: `openbot memory <bot>
import-legacy` copies those entries into the current project's memory. The legacy file is only read, never
changed or removed; a key the project already has with another value keeps the project's value unless
`--overwrite`; a note over openbot's limits is left out and named. Running it again adds nothing twice.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from openbot import paths
from openbot.errors import ConfigError, UsageError
from openbot.files import read_capped
from openbot.state.memory import FILE_LIMIT, MemoryStore


def global_file(bot: str) -> Path:
    return paths.bot_home(bot) / "memory.json"


def _damaged(path: Path, what: str) -> ConfigError:
    return ConfigError(
        f"legacy memory file {path} is damaged: {what}",
        hint="fix it by hand (openbot only reads it, nothing was imported)",
    )


def read_global(bot: str) -> tuple[dict[str, str], list[str]]:
    """(its entries, its other top-level keys); FileNotFoundError if none, ConfigError if damaged."""
    path = global_file(bot)
    try:
        raw, cut = read_capped(path, root=path.parent, limit=FILE_LIMIT)
    except ConfigError as e:  # a link out of the bot's directory, a FIFO, ...
        raise _damaged(path, e.message.removeprefix(f"{path}: ")) from None
    if cut:
        raise _damaged(path, f"it is larger than {FILE_LIMIT // (1024 * 1024)} MB")
    try:
        data: object = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as e:
        raise _damaged(path, f"not valid JSON ({e})") from None
    if not isinstance(data, dict) or not isinstance(data.get("entries"), dict):
        raise _damaged(path, 'expected an object {"entries": {key: value}}')
    for key, value in data["entries"].items():
        if not isinstance(value, str):
            raise _damaged(path, f"the value of {key!r} is {type(value).__name__}, not a string")
    return dict(data["entries"]), sorted(k for k in data if k != "entries")


@dataclass
class Imported:
    added: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    same: list[str] = field(default_factory=list)  # already there with that value
    kept: list[str] = field(default_factory=list)  # the project's own value differs and was kept
    refused: dict[str, str] = field(default_factory=dict)  # key -> why (too big, memory full, bad key)
    other_keys: list[str] = field(default_factory=list)  # top-level keys besides "entries", not imported


def import_global(bot: str, store: MemoryStore, overwrite: bool = False) -> Imported:
    """Copy the legacy entries into `store` (see the module docstring); the legacy file stays as it is."""
    entries, other = read_global(bot)
    current = store.load()  # a damaged project memory fails here, before anything is written
    report = Imported(other_keys=other)
    for key, value in entries.items():
        if current.get(key) == value:
            report.same.append(key)
            continue
        if key in current and not overwrite:
            report.kept.append(key)
            continue
        try:
            store.set(key, value)
        except UsageError as e:
            report.refused[key] = e.message
            continue
        (report.replaced if key in current else report.added).append(key)
    return report


def pending(bot: str, store: MemoryStore) -> str | None:
    """One line offering the import when the legacy file has entries this project's memory lacks."""
    try:
        entries, _ = read_global(bot)
        current = store.load()
    except FileNotFoundError:
        return None
    except ConfigError as e:
        return f"note: {e.message}"
    missing = [k for k in entries if k not in current]
    if not missing:
        return None
    return (
        f"note: the Rust openbot's global memory of {bot} has {len(missing)} note(s) not in this project's "
        f"memory ({global_file(bot)}): `openbot memory {bot} import-legacy` imports them"
    )
