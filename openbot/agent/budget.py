"""Per-run budgets (cost, tokens, wall time), checked before every model call; they fail closed.

With `$OPENBOT_HOME/budget.toml`, `ledger` also reserves each call in the ledger every run shares
(openbot/agent/spendcap.py) and records what it cost.

What a server says a call used is checked before anything counts it: a count that is negative, not a
whole number (NaN, infinity) or absurd — over ABSURD_TOKENS in one call — or a cost that is negative or
not finite is a server error. A negative count would buy room under every cap and one NaN would disable
them all; the call's reservation stays spent."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from openbot.agent.models.base import Usage
from openbot.errors import ModelError
from openbot.events import TokenCount
from openbot.stops import LimitReached

if TYPE_CHECKING:
    from openbot.agent.spendcap import LedgerAccount


# Ten times the largest context window any model offers (10M tokens): one call, its retries with more
# room and a compaction's passes included, bills far less.
ABSURD_TOKENS = 100_000_000


def token_count(model: str, usage: Usage) -> TokenCount:
    """The `token_count` event of one model call (the agent's turn and the review pass both say it)."""
    return TokenCount(
        model=model,
        input=usage.input_tokens,
        output=usage.output_tokens,
        cache_read=usage.cache_read_tokens,
        cache_write=usage.cache_write_tokens,
        cost_usd=round(usage.cost_usd, 6),
        cost_known=usage.cost_known,
    )


def impossible(usage: Usage) -> str:
    """Why no call can have used `usage`, or "" when it can."""
    counts = {
        "input": usage.input_tokens,
        "output": usage.output_tokens,
        "cache read": usage.cache_read_tokens,
        "cache write": usage.cache_write_tokens,
        "1-hour cache write": usage.cache_write_1h_tokens,
        "context": usage.context_tokens,
    }
    for name, n in counts.items():
        whole = isinstance(n, int) or (isinstance(n, float) and n.is_integer())
        if isinstance(n, bool) or not whole:
            return f"{name} tokens {n!r}"
        if not 0 <= n <= ABSURD_TOKENS:
            return f"{name} tokens {n:,.0f}" + (f", over {ABSURD_TOKENS:,} in one call" if n > 0 else "")
    if (
        not isinstance(usage.cost_usd, (int, float))
        or not math.isfinite(usage.cost_usd)
        or usage.cost_usd < 0
    ):
        return f"cost ${usage.cost_usd!r}"
    return ""


@dataclass
class Budget:
    max_cost_usd: float = 0.0  # 0 = no limit
    max_tokens: int = 0
    max_minutes: float = 0.0
    spent: Usage = field(default_factory=Usage)
    started: float = field(default_factory=time.monotonic)
    ledger: LedgerAccount | None = None

    def add(self, usage: Usage) -> None:
        """Count what a call used; ModelError when no call can have used it (nothing counted but the
        call's reservation, which stays spent)."""
        if why := impossible(usage):
            if self.ledger is not None:
                self.ledger.keep_reserved()
            raise ModelError(
                f"the model server reported usage no call can have ({why}): refused as a server error",
                hint="check the server (or its proxy); budgets count only usage that can be real",
            )
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
