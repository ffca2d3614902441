"""The budget ledger every run of one OPENBOT_HOME shares: `$OPENBOT_HOME/ledger.jsonl`.

One JSON line per record, each appended with a single `os.write` on an O_APPEND descriptor under an
exclusive `fcntl.flock` on `ledger.lock`, so parallel processes never interleave and a reservation and
the totals it was checked against are one transaction:

    {"op": "reserve", "id": …, "t": …, "bot": …, "repo": …, "usd": estimate, "pid": …}   before a call
    {"op": "spend",   "id": …, "t": …, "usd": cost}                                         what it cost
    {"op": "release", "id": …, "t": …}                                                      no more calls

An open reservation counts max(estimate, spent under it); a released one what was spent. A process that
dies never releases: its reservation keeps counting (fail closed) until it leaves the window. A torn last
line (a crash mid-write) is ignored and cut off before the next append. Old records are dropped once the
file passes COMPACT_BYTES (rewritten whole, then renamed over it).
"""

from __future__ import annotations

import fcntl
import json
import math
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

FILE, LOCK = "ledger.jsonl", "ledger.lock"
COMPACT_BYTES = 1 << 20
KEEP_SECS = 8 * 24 * 3600.0  # beyond the longest window (7 days)


class CapLike(Protocol):
    """What the ledger needs of a cap (openbot.config.budgetcaps.Cap)."""

    @property
    def scope(self) -> str: ...  # overall | bot | repo

    @property
    def name(self) -> str: ...

    @property
    def usd(self) -> float: ...

    @property
    def window_secs(self) -> float: ...

    def label(self) -> str: ...


@dataclass
class Entry:
    bot: str
    repo: str
    t: float
    reserved: float
    spent: float = 0.0
    open: bool = True

    @property
    def counted(self) -> float:
        return max(self.reserved, self.spent) if self.open else self.spent


class Ledger:
    def __init__(self, home: Path) -> None:
        self.path, self.lock_path = home / FILE, home / LOCK

    @contextmanager
    def _locked(self) -> Iterator[dict[str, Entry]]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield self._read()
        finally:
            os.close(fd)  # closing drops the lock

    def _read(self) -> dict[str, Entry]:
        """Every reservation by id; a torn tail is cut off so the next append starts on its own line."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return {}
        whole = data[: data.rfind(b"\n") + 1]
        if len(whole) != len(data):
            os.truncate(self.path, len(whole))
        entries: dict[str, Entry] = {}
        for line in whole.splitlines():
            try:
                _apply(entries, json.loads(line))
            except (ValueError, KeyError, TypeError):
                continue  # a damaged line is skipped, not fatal: the others still count
        if len(whole) > COMPACT_BYTES:
            self._compact(entries)
        return entries

    def _append(self, record: dict[str, object]) -> None:
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, json.dumps(record, separators=(",", ":")).encode() + b"\n")
        finally:
            os.close(fd)

    def _compact(self, entries: dict[str, Entry]) -> None:
        cutoff = time.time() - KEEP_SECS
        keep = {k: e for k, e in entries.items() if e.t >= cutoff}  # older counts in no window
        tmp = self.path.with_suffix(".tmp")
        lines = []
        for key, e in keep.items():
            lines.append(
                {"op": "reserve", "id": key, "t": e.t, "bot": e.bot, "repo": e.repo, "usd": e.reserved}
            )
            lines.append({"op": "spend", "id": key, "t": e.t, "usd": e.spent})
            if not e.open:
                lines.append({"op": "release", "id": key, "t": e.t})
        tmp.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in lines))
        os.replace(tmp, self.path)
        entries.clear()
        entries.update(keep)

    def reserve(
        self, key: str, release: str, bot: str, repo: str, usd: float, caps: list[CapLike]
    ) -> str | None:
        """Release `release` (the caller's previous reservation, if any) and reserve `usd` for `key`;
        None when reserved, else why not (the cap it would pass, in figures)."""
        with self._locked() as entries:
            if release in entries and entries[release].open:
                self._append({"op": "release", "id": release, "t": time.time()})
                entries[release].open = False
            now = time.time()
            for cap in caps:
                used = used_under(entries, cap, now)
                if used + usd > cap.usd:
                    return (
                        f"budget ledger: the {cap.label()} would be passed: ${used:.4f} spent or reserved, "
                        f"${usd:.4f} reserved for the next call"
                    )
            self._append(
                {
                    "op": "reserve",
                    "id": key,
                    "t": now,
                    "bot": bot,
                    "repo": repo,
                    "usd": usd,
                    "pid": os.getpid(),
                }
            )
            return None

    def spend(self, key: str, usd: float) -> None:
        with self._locked():
            self._append({"op": "spend", "id": key, "t": time.time(), "usd": usd})

    def release(self, key: str) -> None:
        with self._locked():
            self._append({"op": "release", "id": key, "t": time.time()})

    def entries(self) -> dict[str, Entry]:
        with self._locked() as entries:
            return entries


def used_under(entries: dict[str, Entry], cap: CapLike, now: float) -> float:
    """What counts against `cap` in its window ending `now`."""
    since = now - cap.window_secs
    return sum(
        e.counted
        for e in entries.values()
        if e.t >= since and (cap.scope == "overall" or cap.name == (e.bot if cap.scope == "bot" else e.repo))
    )


def _apply(entries: dict[str, Entry], r: dict[str, Any]) -> None:
    key, op = str(r["id"]), r["op"]
    if op == "reserve":
        entries[key] = Entry(str(r["bot"]), str(r["repo"]), float(r["t"]), _usd(r["usd"]))
    elif op == "spend" and key in entries:
        try:
            entries[key].spent += _usd(r["usd"])
        except ValueError:  # a spend no call can have cost: its reservation counts, never less
            entries[key].spent = max(entries[key].spent, entries[key].reserved)
    elif op == "release" and key in entries:
        entries[key].open = False


def _usd(value: object) -> float:
    """A sum of dollars as recorded; ValueError for a negative, NaN or infinite one (which would buy room
    under every cap, or disable them)."""
    usd = float(value)  # type: ignore[arg-type]
    if not math.isfinite(usd) or usd < 0:
        raise ValueError(f"not a sum of dollars: {usd!r}")
    return usd
