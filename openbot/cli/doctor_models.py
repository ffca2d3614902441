"""`openbot doctor`'s model checks: for each bot whose model the `openai` SDK serves, one line saying
whether its key is present (or not needed), its server answers, and the server knows the model."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from openbot.cli.doctor_check import Check
from openbot.config.keys import BotConfig


def check_models(repo_root: Path | None) -> Iterator[Check]:
    from openbot.config.bots import bots_by_source
    from openbot.errors import OpenbotError

    for ref, _ in bots_by_source(repo_root):
        try:
            config = ref.load().config
        except OpenbotError:
            continue  # check_bots already said why
        yield from _check_one(f"model of bot {ref.name} ({ref.source})", config)


def _check_one(label: str, config: BotConfig) -> Iterator[Check]:
    from openbot.agent.models.openai.catalog import lookup
    from openbot.agent.models.openai.endpoint import endpoint_for
    from openbot.config.model_names import parse_model
    from openbot.errors import UsageError

    model = config.model
    name = parse_model(model)
    if not name.is_openai:
        return
    try:
        endpoint = endpoint_for(name, config)
        facts = lookup(name, endpoint, endpoint.client(max_retries=0, timeout=5))
    except UsageError as e:
        yield Check("FAIL", label, f"{model}: {e.one_line()}")
        return
    key = f"key {endpoint.key_var} set" if endpoint.key_var else "no key needed"
    if not facts.known:
        yield Check("FAIL", label, f"{model}: {endpoint.shown_url} does not answer ({key})")
        return
    window = f", window {facts.max_input_tokens:,} tokens" if facts.max_input_tokens else ""
    yield Check("PASS", label, f"{model} served by {endpoint.shown_url} ({key}{window})")
