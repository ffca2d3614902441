"""The `review` table of a bot's config: a second model reads the verified change before it is merged.

    review = { model = "claude-haiku-4-5", prompt = "…", attempts = 2 }

`model` is any model name a bot's `model` may be (scripted:, Claude, openai:, ollama:…); `prompt` the
reviewer's system prompt ("" = openbot's default, run/review.py); `attempts` how many reviews may ask for
changes before the run ends `unreviewed` (exit 7). The pass itself is openbot/run/review.py.
"""

from __future__ import annotations

from dataclasses import dataclass

from openbot.config.frontmatter import toml_value
from openbot.errors import ConfigError

KEYS = ("model", "prompt", "attempts")
MAX_ATTEMPTS = 20
EXAMPLE = 'review = { model = "claude-haiku-4-5", attempts = 2 }'


@dataclass(frozen=True)
class ReviewSpec:
    model: str
    prompt: str = ""
    attempts: int = 2


def parse_review(value: object, source: str) -> ReviewSpec | None:
    """None when the bot has no review; else its spec, or a one-line ConfigError naming the key."""
    if value in ({}, None):
        return None
    if not isinstance(value, dict):
        raise ConfigError(f"{source}: key 'review' must be a table, got {toml_value(value)}", hint=EXAMPLE)
    for key in value:
        if key not in KEYS:
            raise ConfigError(
                f"{source}: key 'review.{key}' is unknown", hint=f"review takes {', '.join(KEYS)}"
            )
    model, prompt, attempts = value.get("model"), value.get("prompt", ""), value.get("attempts", 2)
    if not isinstance(model, str) or not model.strip():
        got = "is missing" if model is None else f"must be a model name, got {toml_value(model)}"
        raise ConfigError(f"{source}: key 'review.model' {got}", hint=EXAMPLE)
    if not isinstance(prompt, str):
        raise ConfigError(
            f"{source}: key 'review.prompt' must be a string, got {toml_value(prompt)}",
            hint='e.g. prompt = "You review changes for security."',
        )
    if isinstance(attempts, bool) or not isinstance(attempts, int) or not 1 <= attempts <= MAX_ATTEMPTS:
        raise ConfigError(
            f"{source}: key 'review.attempts' must be a whole number from 1 to {MAX_ATTEMPTS},"
            f" got {toml_value(attempts)}",
            hint="e.g. attempts = 2",
        )
    return ReviewSpec(model.strip(), prompt, attempts)
