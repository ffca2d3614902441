"""Defaults that depend on the model: what a small model gets where its config.md sets nothing.

A scripted model (docs/SCRIPTED.md) is not questioned when it completes with nothing changed.

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
# and 3 in a row end the turn, where 5 would spend two more slow model calls on the same reply.
SMALL_MODEL = {"max_repeats": 3}


def is_small(model: str) -> bool:
    return parse_model(model).backend == "chat"


# A script replays what it was written to say: a question it was not written for would only run it out.
SCRIPTED = {"question_unchanged": False}


def model_defaults(values: Mapping[str, object]) -> dict[str, object]:
    """The keys the model sets by default, for a config of these `values` (a valid model name)."""
    model = str(values.get("model", DEFAULT_MODEL))
    if parse_model(model).backend == "scripted":
        return dict(SCRIPTED)
    return dict(SMALL_MODEL) if is_small(model) else {}
