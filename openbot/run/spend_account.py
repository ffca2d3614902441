"""The run's account with the shared budget ledger, when `$OPENBOT_HOME/budget.toml` caps apply to it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from openbot import paths
from openbot.agent.spendcap import LedgerAccount
from openbot.config.budgetcaps import load_caps
from openbot.errors import ConfigError
from openbot.state.ledger import Ledger

if TYPE_CHECKING:
    from openbot.run.plan import RunPlan


def open_account(plan: RunPlan) -> LedgerAccount | None:
    """None without budget.toml or a cap for this bot and repository; ConfigError for a bad file, or a
    model whose price is unknown (its calls could not be reserved: the caps could not be kept)."""
    caps = load_caps()
    applying = caps.applying_to(plan.bot.name, plan.project.slug) if caps else []
    if caps is None or not applying:
        return None
    config = plan.config
    # Any model of the chain may answer the next call: reserve at the dearest one's prices.
    chain = [plan.model, *config.fallback_models]
    found = [(m, call_prices(m, config.price_in_per_mtok, config.price_out_per_mtok)) for m in chain]
    for model, price in found:
        if price is None:
            raise ConfigError(
                f"{caps.path}: caps apply to this run, but model {model!r} has no known price",
                hint="use a priced model, or price_in_per_mtok / price_out_per_mtok on a local server",
            )
    known = [p for _, p in found if p is not None]
    prices = (max(p[0] for p in known), max(p[1] for p in known))
    ledger = Ledger(paths.home())
    return LedgerAccount(
        ledger, applying, plan.bot.name, plan.project.slug, prices, plan.config.max_output_tokens
    )


def call_prices(model: str, config_in: float, config_out: float) -> tuple[float, float] | None:
    """USD per million (input, output) tokens: the config's for local servers, 0 for scripted models,
    the table's otherwise (its long-prompt factor included: the reservation must not fall short)."""
    from openbot.agent.models.pricing import price_of
    from openbot.config.model_names import parse_model

    if model.startswith("scripted"):
        return 0.0, 0.0
    if parse_model(model).backend == "chat":
        return config_in, config_out
    price = price_of(model)
    if price is None:
        return None
    factor = price.long_prompt[1] if price.long_prompt else 1.0
    return price.input * factor, price.output * factor
