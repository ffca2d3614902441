"""The budget ledger's file: one transaction per reservation, old records dropped past COMPACT_BYTES."""

from __future__ import annotations

import json
import time
from pathlib import Path

from openbot.config.budgetcaps import Cap
from openbot.state import ledger as ledger_mod
from openbot.state.ledger import Ledger


def test_reservations_count_until_released_and_old_records_are_compacted(tmp_path: Path) -> None:
    book = Ledger(tmp_path)
    cap = [Cap("overall", "", "weekly_usd", 1.0)]
    assert book.reserve("a", "", "bot", "repo", 0.6, cap) is None
    refused = book.reserve("b", "", "bot", "repo", 0.6, cap)  # a's reservation still counts in full
    assert refused is not None and "$0.6000 spent or reserved" in refused
    book.spend("a", 0.1)
    assert book.reserve("b", "a", "bot", "repo", 0.6, cap) is None  # a released: only its $0.1 counts
    old = time.time() - 9 * 24 * 3600
    filler = json.dumps({"op": "reserve", "id": "x", "t": old, "bot": "b", "repo": "r", "usd": 1.0}) + "\n"
    with open(tmp_path / "ledger.jsonl", "a") as f:
        f.write(filler * (ledger_mod.COMPACT_BYTES // len(filler) + 1))
    entries = book.entries()
    assert set(entries) == {"a", "b"} and entries["a"].spent == 0.1 and entries["b"].open
    assert (tmp_path / "ledger.jsonl").stat().st_size < 1000
    assert book.reserve("c", "b", "bot", "repo", 0.5, cap) is None  # the rewritten file still adds up
    assert book.reserve("d", "", "bot", "repo", 0.5, cap) is not None
