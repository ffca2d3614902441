"""Prices by model family, cache multipliers, fallbacks, and the current SDK model names."""

from __future__ import annotations

import subprocess
import sys
import typing

import pytest

from openbot.agent.models.base import Usage
from openbot.agent.models.pricing import PRICES, cost_usd, price_of, price_usage


def million(**kw: int) -> Usage:
    return Usage(**{k: v * 1_000_000 for k, v in kw.items()})


@pytest.mark.parametrize(
    ("model", "price"),
    [
        ("claude-opus-4-5-20251101", (5.0, 25.0)),
        ("claude-opus-4-1-20250805", (15.0, 75.0)),
        ("claude-opus-4-20250514", (15.0, 75.0)),
        ("claude-opus-5-5", (4.0, 20.0)),
        ("claude-opus-5", (5.0, 25.0)),
        ("claude-sonnet-4-5-20250929", (3.0, 15.0)),
        ("claude-sonnet-5-5", (2.0, 10.0)),
        ("claude-haiku-4-5-20251001", (1.0, 5.0)),
        ("claude-fable-5-1", (10.0, 50.0)),
    ],
)
def test_price_by_longest_prefix(model: str, price: tuple[float, float]) -> None:
    row = price_of(model)
    assert row is not None and (row.input, row.output) == price and row.source


@pytest.mark.parametrize("model", ["claude-opus-9", "some-new-model", "claude-sonnet"])
def test_an_unknown_model_has_an_unknown_cost_not_a_guess(model: str) -> None:
    assert price_of(model) is None and cost_usd(model, million(input_tokens=1)) is None
    priced = price_usage(model, million(input_tokens=1))
    assert priced.cost_usd == 0.0 and not priced.cost_known
    total = Usage()
    total.add(price_usage("claude-sonnet-5-5", million(input_tokens=1)))
    total.add(priced)
    assert not total.cost_known  # one unknown call makes the total unknown


def test_one_hour_cache_writes_cost_twice_the_input_price() -> None:
    usage = million(cache_write_tokens=2, cache_write_1h_tokens=1)
    assert cost_usd("claude-sonnet-4-6", usage) == pytest.approx(3 * 1.25 + 3 * 2.0)


def test_cost_counts_cache_reads_at_a_tenth_and_writes_at_one_and_a_quarter() -> None:
    usage = million(input_tokens=1, output_tokens=1, cache_read_tokens=1, cache_write_tokens=1)
    assert cost_usd("claude-sonnet-4-6", usage) == pytest.approx(3 + 15 + 0.3 + 3.75)


def test_published_lower_cache_read_rates_are_used() -> None:
    assert cost_usd("claude-opus-5-5", million(cache_read_tokens=1)) == pytest.approx(0.20)
    assert cost_usd("claude-fable-5-1", million(cache_read_tokens=1)) == pytest.approx(0.25)


def test_haiku_5_5_long_prompts_cost_five_times() -> None:
    short = Usage(input_tokens=100_000, output_tokens=1000)
    long = Usage(input_tokens=60_000, cache_read_tokens=50_000, output_tokens=1000)
    assert cost_usd("claude-haiku-5-5", short) == pytest.approx((100_000 * 0.10 + 1000 * 0.50) / 1e6)
    assert cost_usd("claude-haiku-5-5", long) == pytest.approx(
        (60_000 * 0.5 + 50_000 * 0.05 + 1000 * 2.5) / 1e6
    )


def test_scripted_models_are_free() -> None:
    assert cost_usd("scripted:/tmp/s.json", million(input_tokens=5, output_tokens=5)) == 0.0


def test_every_current_sdk_model_has_its_own_price() -> None:
    import anthropic.types

    literal = typing.get_args(anthropic.types.Model)[0]
    names = typing.get_args(literal)
    assert names, "anthropic.types.Model lists no names"
    unpriced = [n for n in names if not any(n.startswith(k) for k in PRICES)]
    assert unpriced == []


def test_pricing_does_not_import_the_sdk() -> None:
    code = "import sys, openbot.agent.models.pricing; print('anthropic' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
