"""What a model call costs in USD: one price table, one source note per row.

Prices are looked up by the longest key that prefixes the model name, so dated snapshots
(`claude-opus-4-5-20251101`) and 1M-context variants (`claude-opus-5-5[1m]`) share their family's price.
A name no key prefixes has no known price: its cost is unknown (shown as "?"), never guessed, and a run
with `max_cost_usd` refuses to start on it unless `--allow-unknown-price`. Scripted models cost 0.

Cache writes cost 1.25x input with the 5-minute TTL and 2x input with the 1-hour TTL; cache reads cost
`read` x input (0.1 unless the row publishes a lower rate). Source of every row: the per-model pricing
table at platform.claude.com/docs/en/about-claude/pricing and the models overview, read 2026-10,
unless the row says otherwise.

OpenAI rows (`openai:` models and bare `gpt-*`/`o*`/`*-codex` names): `read` is the cached-input price
as a share of input; OpenAI bills no cache-write premium (the backend counts writes as input). Models on
other OpenAI-compatible servers (`ollama:`, `openai-compatible:`…) are priced by the backend from the
bot's `price_in_per_mtok` / `price_out_per_mtok` (0 when not given), never from this table.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from openbot.agent.models.base import Usage

PUBLISHED = "pricing page, 2026-10"
OPENAI_2025 = "OpenAI pricing page (platform.openai.com/docs/pricing) as of 2025, not re-read since"
OPENAI_GATEWAY = "OpenAI's rate as listed by Vercel AI Gateway and kissapi.ai, read 2026-11"
OPENAI_CODEX_CARD = "OpenAI Help Center Codex rate card (25 credits = $1), checked 2026-05-13"
OPENAI_TOKENMATH = "OpenAI model pricing, as verified by tokenmath.io 2026-06-21"
CACHE_WRITE_5M = 1.25
CACHE_WRITE_1H = 2.0


@dataclass(frozen=True)
class Price:
    input: float  # USD per million input tokens
    output: float  # USD per million output tokens
    source: str
    read: float = 0.1  # cache reads, as a share of the input price
    long_prompt: tuple[int, float] | None = None  # (prompt tokens above which, price factor)


PRICES: dict[str, Price] = {
    "claude-fable-5-2": Price(10.0, 50.0, "no published price at 2026-10: Fable 5.1's", read=0.025),
    "claude-fable-5-1": Price(10.0, 50.0, PUBLISHED, read=0.025),
    "claude-fable-5": Price(10.0, 50.0, PUBLISHED),
    "claude-mythos-5-2": Price(10.0, 50.0, "no published price at 2026-10: Mythos 5.1's", read=0.025),
    "claude-mythos-5-1": Price(10.0, 50.0, PUBLISHED, read=0.025),
    "claude-mythos-5": Price(10.0, 50.0, PUBLISHED),
    "claude-mythos-preview": Price(25.0, 125.0, PUBLISHED),
    "claude-opus-5-5": Price(4.0, 20.0, PUBLISHED, read=0.05),
    "claude-opus-5": Price(5.0, 25.0, PUBLISHED),
    "claude-opus-4-8": Price(5.0, 25.0, PUBLISHED),
    "claude-opus-4-7": Price(5.0, 25.0, PUBLISHED),
    "claude-opus-4-6": Price(5.0, 25.0, PUBLISHED),
    "claude-opus-4-5": Price(5.0, 25.0, PUBLISHED),
    "claude-opus-4-1": Price(15.0, 75.0, PUBLISHED),
    "claude-opus-4": Price(15.0, 75.0, PUBLISHED),
    "claude-3-opus": Price(15.0, 75.0, "pricing page, legacy models, 2026-10"),
    "claude-sonnet-5-5": Price(2.0, 10.0, PUBLISHED, read=0.05),
    "claude-sonnet-5": Price(2.0, 10.0, PUBLISHED),
    "claude-sonnet-4": Price(3.0, 15.0, PUBLISHED),
    "claude-3-7-sonnet": Price(3.0, 15.0, "pricing page, legacy models, 2026-10"),
    "claude-3-5-sonnet": Price(3.0, 15.0, "pricing page, legacy models, 2026-10"),
    "claude-haiku-5-5": Price(
        0.10, 0.50, PUBLISHED + "; prompts over 100k tokens bill at 5x", long_prompt=(100_000, 5.0)
    ),
    "claude-haiku-4-5": Price(1.0, 5.0, PUBLISHED),
    "claude-3-5-haiku": Price(0.80, 4.0, "pricing page, legacy models, 2026-10"),
    "claude-3-haiku": Price(0.25, 1.25, "pricing page, legacy models, 2026-10"),
    # OpenAI: platform.openai.com/docs/pricing is not stored here; each row names where it was read.
    "gpt-5.5": Price(5.0, 30.0, OPENAI_GATEWAY),
    "gpt-5.4-mini": Price(0.75, 4.5, OPENAI_GATEWAY),
    "gpt-5.4": Price(2.5, 15.0, OPENAI_GATEWAY),
    "gpt-5.3-codex": Price(1.75, 14.0, OPENAI_GATEWAY),
    "gpt-5.2": Price(1.75, 14.0, OPENAI_CODEX_CARD),
    "gpt-5.1-codex-mini": Price(0.25, 2.0, "as gpt-5-mini (OpenAI pricing page, 2025-11)"),
    "gpt-5.1": Price(1.25, 10.0, "OpenAI pricing as reported at the 2025-11-13 launch (koishiai.com)"),
    "gpt-5-mini": Price(0.25, 2.0, OPENAI_2025),
    "gpt-5-nano": Price(0.05, 0.40, OPENAI_2025),
    "gpt-5": Price(1.25, 10.0, OPENAI_2025),
    "gpt-4.1-mini": Price(0.40, 1.60, OPENAI_TOKENMATH, read=0.25),
    "gpt-4.1-nano": Price(0.10, 0.40, OPENAI_2025, read=0.25),
    "gpt-4.1": Price(2.0, 8.0, OPENAI_TOKENMATH, read=0.25),
    "gpt-4o-mini": Price(0.15, 0.60, OPENAI_2025, read=0.5),
    "gpt-4o": Price(2.5, 10.0, OPENAI_2025, read=0.5),
    "o4-mini": Price(1.10, 4.40, OPENAI_2025, read=0.25),
    "o3-mini": Price(1.10, 4.40, OPENAI_2025, read=0.5),
    "o3-pro": Price(20.0, 80.0, OPENAI_2025, read=1.0),
    "o3": Price(2.0, 8.0, OPENAI_2025 + " (after the 2025-06 price cut)", read=0.25),
    "o1": Price(15.0, 60.0, OPENAI_2025, read=0.5),
    "codex-mini": Price(1.5, 6.0, OPENAI_2025, read=0.25),
}


def _table_name(model: str) -> str:
    """The name the table is keyed by: `openai:gpt-4.1` and a bare `gpt-4.1` are both `gpt-4.1`."""
    from openbot.config.model_names import parse_model

    name = parse_model(model)
    return name.target if name.backend == "openai" else model


def _priced_by_config(model: str) -> bool:
    from openbot.config.model_names import parse_model

    return model.startswith("scripted") or parse_model(model).backend == "chat"


def price_of(model: str) -> Price | None:
    """The price row for `model`, or None when no row's key prefixes it (the price is unknown)."""
    model = _table_name(model)
    key = max((k for k in PRICES if model.startswith(k)), key=len, default="")
    return PRICES[key] if key else None


def cost_usd(model: str, usage: Usage) -> float | None:
    """USD for one call's usage; 0 for scripted and local models (the backend applies the config's
    prices); None when the model's price is unknown."""
    if _priced_by_config(model):
        return 0.0
    price = price_of(model)
    if price is None:
        return None
    price_in, price_out = price.input, price.output
    if price.long_prompt and usage.prompt_tokens > price.long_prompt[0]:
        price_in, price_out = price_in * price.long_prompt[1], price_out * price.long_prompt[1]
    write_1h = min(usage.cache_write_1h_tokens, usage.cache_write_tokens)
    dollars = (
        usage.input_tokens * price_in
        + (usage.cache_write_tokens - write_1h) * price_in * CACHE_WRITE_5M
        + write_1h * price_in * CACHE_WRITE_1H
        + usage.cache_read_tokens * price_in * price.read
        + usage.output_tokens * price_out
    )
    return dollars / 1_000_000


def price_usage(model: str, usage: Usage) -> Usage:
    """`usage` with its cost filled in (cost 0 and `cost_known` False when the price is unknown)."""
    cost = cost_usd(model, usage)
    return replace(usage, cost_usd=cost or 0.0, cost_known=cost is not None)


def known_price(model: str) -> bool:
    return _priced_by_config(model) or price_of(model) is not None
