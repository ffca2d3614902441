"""Defaults that depend on the model: what a small model gets where its config.md sets nothing.

The rule: a model on a Chat Completions server (`openai-compatible:`, `ollama:`, `vllm:`, `lmstudio:`,
`llamacpp:`; docs/MODELS.md) is taken as small — the local and self-hosted models openbot is pointed
at, whose tool use is the least reliable. Claude and OpenAI's own models keep the plain defaults. A key
the config or the command line sets always wins; `openbot bots show` says which values came from here.
"""

from __future__ import annotations

from collections.abc import Mapping

from openbot.config.keys import DEFAULT_MODEL
from openbot.config.model_names import parse_model

# A lost small model repeats one call; its repeats are answered from the known result (agent/repeats.py)
# and 3 in a row end the turn, where 5 would spend two more slow model calls on the same reply. It also
# stores its answer with `memory set` and completes with nothing changed: that is questioned once
# (run/unchanged.py). Claude's and OpenAI's defaults change only where a measurement says so.
SMALL_MODEL: dict[str, object] = {"max_repeats": 3, "question_unchanged": True}


def is_small(model: str) -> bool:
    return parse_model(model).backend == "chat"


def model_defaults(values: Mapping[str, object]) -> dict[str, object]:
    """The keys the model sets by default, for a config of these `values` (a valid model name)."""
    return dict(SMALL_MODEL) if is_small(str(values.get("model", DEFAULT_MODEL))) else {}
