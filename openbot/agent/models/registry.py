"""Choosing a model backend by its parsed name (`config.model_names`): `scripted:<path>` → the scripted
backend, `openai:`, `ollama:`, `openai-compatible:`… and bare OpenAI names → the OpenAI-SDK backend,
anything else → Claude.

Each backend is imported only here, when chosen (an SDK takes seconds to import). `make_ready` checks
what a model needs before the plan asks the Models API about it (an API key or a server URL is set) and
gets its transport ready meanwhile; `load_backend` then builds the backend once, with the knobs the
answer allows (a script is checked as it loads).
"""

from __future__ import annotations

from openbot.agent.models.base import ModelBackend, ModelOptions
from openbot.config.keys import BotConfig
from openbot.config.model_names import ModelName


def make_ready(name: ModelName, config: BotConfig) -> None:
    """UsageError (exit 2) when `name` cannot be called: its key or server URL is missing; else its
    HTTP client is built on a thread while the plan goes on (the scripted backend needs nothing)."""
    if name.is_openai:
        from openbot.agent.models.openai.endpoint import endpoint_for

        endpoint_for(name, config)
    elif name.backend == "anthropic":
        from openbot.agent.models.anthropic.backend import require_key
        from openbot.agent.models.anthropic.http import shared

        shared(require_key(name.target)).warm()


def load_backend(
    name: ModelName,
    config: BotConfig,
    options: ModelOptions | None = None,
    output_ceiling: int | None = None,
) -> ModelBackend:
    """The backend for `name`; `output_ceiling` is the model's largest max_tokens (Models API); `config`
    gives an OpenAI-SDK model its server, key variable, window and prices."""
    if name.script is not None:
        from openbot.agent.models.scripted import ScriptedModel

        return ScriptedModel.from_file(name.script)
    if name.is_openai:
        from openbot.agent.models.openai.backend import OUTPUT_CEILING, OpenAIModel
        from openbot.agent.models.openai.endpoint import endpoint_for

        ceiling = output_ceiling or OUTPUT_CEILING
        return OpenAIModel(name, endpoint_for(name, config), options=options, max_output_tokens=ceiling)
    from openbot.agent.models.anthropic.backend import OUTPUT_CEILING as CLAUDE_CEILING
    from openbot.agent.models.anthropic.backend import AnthropicModel

    ceiling = output_ceiling or CLAUDE_CEILING
    return AnthropicModel(name.target, options=options or ModelOptions(), max_output_tokens=ceiling)


def fallback_chain(chain: list[ModelBackend]) -> ModelBackend:
    """The run's model followed by its `fallback_models`, as one backend (agent/models/fallback.py)."""
    from openbot.agent.models.fallback import FallbackModel

    return FallbackModel(chain)
