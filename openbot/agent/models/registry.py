"""Choosing a model backend by its name: `scripted:<path>` → the scripted backend, anything else → Claude.

Each backend is imported only here, when chosen (the Anthropic SDK takes seconds to import), and checks
what it needs as it is built (the script loads, an API key is set), so a plan that builds its backend
fails before anything is created.
"""

from __future__ import annotations

from openbot.agent.models import parse_model
from openbot.agent.models.base import ModelBackend, ModelOptions


def load_backend(
    model: str, options: ModelOptions | None = None, output_ceiling: int | None = None
) -> ModelBackend:
    """The backend for `model`; `output_ceiling` is the model's largest max_tokens (Models API)."""
    name = parse_model(model)
    if name.script is not None:
        from openbot.agent.models.scripted import ScriptedModel

        return ScriptedModel.from_file(name.script)
    from openbot.agent.models.anthropic import AnthropicModel

    if output_ceiling:
        return AnthropicModel(
            name.target, options=options or ModelOptions(), max_output_tokens=output_ceiling
        )
    return AnthropicModel(name.target, options=options or ModelOptions())
