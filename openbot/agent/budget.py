"""Per-run budgets (cost, tokens, wall time), checked before every model call; they fail closed.

With `$OPENBOT_HOME/budget.toml`, `ledger` also reserves each call in the ledger every run shares
(openbot/agent/spendcap.py) and records what it cost."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from openbot.agent.models.base import Usage
from openbot.stops import LimitReached

if TYPE_CHECKING:
    from openbot.agent.spendcap import LedgerAccount


@dataclass
class Budget:
    max_cost_usd: float = 0.0  # 0 = no limit
    max_tokens: int = 0
    max_minutes: float = 0.0
    spent: Usage = field(default_factory=Usage)
    started: float = field(default_factory=time.monotonic)
    ledger: LedgerAccount | None = None

    def add(self, usage: Usage) -> None:
        self.spent.add(usage)
        if self.ledger is not None:
            self.ledger.spent(usage)

    def close(self) -> None:
        """No more model calls: the ledger's reservation, if any, gives way to what was spent."""
        if self.ledger is not None:
            self.ledger.close()

    def minutes(self) -> float:
        return (time.monotonic() - self.started) / 60

    def deadline(self) -> float | None:
        """The time.monotonic() at which max_minutes runs out (None without a wall-time limit)."""
        return self.started + self.max_minutes * 60 if self.max_minutes else None

    def check(self) -> None:
        """Raise LimitReached when any limit is reached, OverBudget when the ledger refuses the next call;
        called before every model call."""
        s = self.spent
        if self.max_cost_usd and s.cost_usd >= self.max_cost_usd:
            raise LimitReached(
                "max_cost_usd", f"cost limit reached: ${s.cost_usd:.4f} spent of ${self.max_cost_usd:.4f}"
            )
        if self.max_tokens and s.budget_tokens >= self.max_tokens:
            raise LimitReached(
                "max_tokens",
                f"token limit reached: {s.budget_tokens:,} used of {self.max_tokens:,} "
                "(input, output and cache writes)",
            )
        if self.max_minutes and self.minutes() >= self.max_minutes:
            raise LimitReached(
                "max_minutes",
                f"time limit reached: {self.minutes():.2f} min used, max_minutes = {self.max_minutes:g}",
            )
        if self.ledger is not None:
            self.ledger.before_call()

    def status(self) -> dict[str, object]:
        """Spent / limit figures for the live view, metadata and the --json summary."""
        return {
            "cost_usd": round(self.spent.cost_usd, 6),
            "cost_known": self.spent.cost_known,
            "max_cost_usd": self.max_cost_usd or None,
            "tokens": self.spent.budget_tokens,  # what max_tokens counts
            "max_tokens": self.max_tokens or None,
            "minutes": round(self.minutes(), 2),
            "max_minutes": self.max_minutes or None,
        }
