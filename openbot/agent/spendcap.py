"""A run's account with the shared budget ledger: a reservation before each model call, settled after.

The reservation must cover what the next call can cost, or parallel runs could pass a cap together:

    output  max_output_tokens at the model's output price (a reply cannot be longer)
    input   (the last call's prompt + its reply + TOOL_ROOM for the tool results since) tokens, at twice
            the input price (the dearest rate a prompt token bills at: a 1-hour cache write); the first
            call, with nothing to go by, FIRST_CALL tokens

A call whose new tool output is larger than TOOL_ROOM tokens can cost more than was reserved (the
overshoot is that difference, once per parallel run); docs/BUDGET.md says so.
"""

from __future__ import annotations

import os
import uuid

from openbot.agent.models.base import Usage
from openbot.config.budgetcaps import Cap
from openbot.state.ledger import Ledger
from openbot.stops import OverBudget

TOOL_ROOM = 20_000
FIRST_CALL = 40_000
PROMPT_RATE = 2.0  # the input price multiple of a 1-hour cache write, the dearest way a prompt bills


class LedgerAccount:
    def __init__(
        self,
        ledger: Ledger,
        caps: list[Cap],
        bot: str,
        repo: str,
        prices: tuple[float, float],  # USD per million tokens: (input, output)
        max_output_tokens: int,
    ) -> None:
        self.ledger, self.caps, self.bot, self.repo = ledger, caps, bot, repo
        self.prices, self.max_output_tokens = prices, max_output_tokens
        self.last: Usage | None = None
        self.key = ""  # the open reservation
        self.reserved = 0.0  # what it reserved

    def estimate(self) -> float:
        price_in, price_out = self.prices
        last = self.last
        prompt = last.prompt_tokens + last.output_tokens + TOOL_ROOM if last else FIRST_CALL
        return (prompt * price_in * PROMPT_RATE + self.max_output_tokens * price_out) / 1_000_000

    def before_call(self) -> None:
        """Reserve for the next call (the previous reservation released in the same transaction), or
        raise OverBudget when a cap would be passed."""
        key, self.reserved = f"{os.getpid()}-{uuid.uuid4().hex[:12]}", self.estimate()
        try:
            refusal = self.ledger.reserve(key, self.key, self.bot, self.repo, self.reserved, list(self.caps))
        except OSError as e:  # fail closed: a call the ledger cannot record is not made
            refusal = f"budget ledger {self.ledger.path} could not be used: {e.strerror or e}"
        self.key = "" if refusal else key
        if refusal:
            raise OverBudget(refusal)

    def spent(self, usage: Usage) -> None:
        self.last = usage
        if self.key:
            self.ledger.spend(self.key, usage.cost_usd)

    def keep_reserved(self) -> None:
        """The call's reported usage was refused: what was reserved for it counts as spent."""
        if self.key:
            self.ledger.spend(self.key, self.reserved)

    def close(self) -> None:
        """No more calls from this process: its reservation gives way to what it spent."""
        if self.key:
            self.ledger.release(self.key)
            self.key = ""
