"""What a model call costs in USD, from Anthropic's published per-million-token prices.

Prices are looked up by the longest key that prefixes the model name, so dated snapshots
(`claude-opus-4-5-20251101`) and 1M-context variants (`claude-opus-5-5[1m]`) share their family's price.
A name no key prefixes is priced by its family word (opus / sonnet / haiku / fable / mythos) and, failing
that, at the Sonnet 4.x price, the dearer Sonnet rate, so a budget errs towards stopping early.
Scripted models cost 0.

Cache writes (5-minute TTL, the only one openbot uses) cost 1.25x input; cache reads 0.1x input, except
where the price list publishes a lower read rate (CACHE_READ_SHARE). Source: platform.claude.com pricing
and per-model overview pages, read 2026-10; Fable/Mythos 5.2 had no published price and take 5.1's.
"""

from __future__ import annotations

from collections.abc import Iterable

from openbot.agent.models.base import Usage

# model-name prefix -> (input, output) USD per million tokens
PRICES: dict[str, tuple[float, float]] = {
    "claude-fable-5-2": (10.0, 50.0),
    "claude-fable-5-1": (10.0, 50.0),
    "claude-fable-5": (10.0, 50.0),
    "claude-mythos-5-2": (10.0, 50.0),
    "claude-mythos-5-1": (10.0, 50.0),
    "claude-mythos-5": (10.0, 50.0),
    "claude-mythos-preview": (25.0, 125.0),
    "claude-opus-5-5": (4.0, 20.0),
    "claude-opus-5": (5.0, 25.0),
    "claude-opus-4-8": (5.0, 25.0),
    "claude-opus-4-7": (5.0, 25.0),
    "claude-opus-4-6": (5.0, 25.0),
    "claude-opus-4-5": (5.0, 25.0),
    "claude-opus-4-1": (15.0, 75.0),
    "claude-opus-4": (15.0, 75.0),
    "claude-3-opus": (15.0, 75.0),
    "claude-sonnet-5-5": (2.0, 10.0),
    "claude-sonnet-5": (2.0, 10.0),
    "claude-sonnet-4": (3.0, 15.0),
    "claude-3-7-sonnet": (3.0, 15.0),
    "claude-3-5-sonnet": (3.0, 15.0),
    "claude-haiku-5-5": (0.10, 0.50),
    "claude-haiku-4-5": (1.0, 5.0),
    "claude-3-5-haiku": (0.80, 4.0),
    "claude-3-haiku": (0.25, 1.25),
}

# Names no key above prefixes: the family's current price.
FAMILY_PRICES: dict[str, tuple[float, float]] = {
    "fable": (10.0, 50.0),
    "mythos": (10.0, 50.0),
    "opus": (5.0, 25.0),
    "sonnet": (3.0, 15.0),
    "haiku": (1.0, 5.0),
}
DEFAULT_PRICE = FAMILY_PRICES["sonnet"]

CACHE_WRITE_SHARE = 1.25
CACHE_READ_SHARE_DEFAULT = 0.1
# Models whose published cache-read price is below 0.1x input.
CACHE_READ_SHARE: dict[str, float] = {
    "claude-fable-5-2": 0.025,
    "claude-fable-5-1": 0.025,
    "claude-mythos-5-2": 0.025,
    "claude-mythos-5-1": 0.025,
    "claude-opus-5-5": 0.05,
    "claude-sonnet-5-5": 0.05,
}

# Haiku 5.5 bills a whole request at 5x when its prompt (input + cache reads + writes) exceeds 100k tokens.
LONG_PROMPT: dict[str, tuple[int, float]] = {"claude-haiku-5-5": (100_000, 5.0)}


def _longest_prefix(model: str, keys: Iterable[str]) -> str:
    return max((k for k in keys if model.startswith(k)), key=len, default="")


def price_of(model: str) -> tuple[float, float]:
    """(input, output) USD per million tokens for `model`."""
    key = _longest_prefix(model, PRICES)
    if key:
        return PRICES[key]
    return next((p for word, p in FAMILY_PRICES.items() if word in model), DEFAULT_PRICE)


def cost_usd(model: str, usage: Usage) -> float:
    """USD for one call's usage; 0 for scripted models."""
    if model.startswith("scripted"):
        return 0.0
    price_in, price_out = price_of(model)
    read_key = _longest_prefix(model, CACHE_READ_SHARE)
    read_share = CACHE_READ_SHARE.get(read_key, CACHE_READ_SHARE_DEFAULT)
    threshold, factor = LONG_PROMPT.get(_longest_prefix(model, LONG_PROMPT), (0, 1.0))
    prompt = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
    if threshold and prompt > threshold:
        price_in, price_out = price_in * factor, price_out * factor
    dollars = (
        usage.input_tokens * price_in
        + usage.cache_write_tokens * price_in * CACHE_WRITE_SHARE
        + usage.cache_read_tokens * price_in * read_share
        + usage.output_tokens * price_out
    )
    return dollars / 1_000_000
