"""Choosing a model backend by its name: `scripted:<path>` → the scripted backend, `openai:`, `ollama:`,
`openai-compatible:`… and bare OpenAI names → the OpenAI-SDK backend, anything else → Claude.

Each backend is imported only here, when chosen (the SDKs take seconds to import), and checks what it
needs as it is built (the script loads, an API key or a server URL is set), so a plan that builds its
backend fails before anything is created.
"""

from __future__ import annotations

from typing import Any

from openbot.agent.models import parse_model
from openbot.agent.models.base import ModelBackend, ModelOptions


def load_backend(
    model: str, options: ModelOptions | None = None, output_ceiling: int | None = None, config: Any = None
) -> ModelBackend:
    """The backend for `model`; `output_ceiling` is the model's largest max_tokens (Models API);
    `config` (a BotConfig) gives an OpenAI-SDK model its server, key variable, window and prices."""
    name = parse_model(model)
    if name.script is not None:
        from openbot.agent.models.scripted import ScriptedModel

        return ScriptedModel.from_file(name.script)
    if name.is_openai:
        from openbot.agent.models.openai_backend import OpenAIModel
        from openbot.agent.models.openai_endpoint import endpoint_for

        endpoint = endpoint_for(name, config)
        if output_ceiling:
            return OpenAIModel(name, endpoint, options=options, max_output_tokens=output_ceiling)
        return OpenAIModel(name, endpoint, options=options)
    from openbot.agent.models.anthropic import AnthropicModel

    if output_ceiling:
        return AnthropicModel(
            name.target, options=options or ModelOptions(), max_output_tokens=output_ceiling
        )
    return AnthropicModel(name.target, options=options or ModelOptions())
