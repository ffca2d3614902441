"""What an OpenAI or OpenAI-compatible server says about a model, as `catalog.ModelFacts`, at plan time.

`openai:` models: `GET /models/{id}` (unknown → exit 2); OpenAI's listing gives no window, so the
window and output ceiling come from WINDOWS (source: OpenAI's model pages, as read 2025-12; a model no
row prefixes gets the config's `context_window`, else OPENAI_DEFAULT). Other servers: `GET /models` must list
the model (Ollama lists `name:latest` for `name`); a window the server states in its listing (vLLM's
`max_model_len`, LM Studio's `max_context_length`, OpenRouter's `context_length`) wins over the
config's `context_window`, which wins over WINDOWS, which wins over DEFAULT_WINDOW. An unreachable
server is not an error here (the run's calls wait it out, as on the Anthropic path) but a warning.
On a compatible server the output ceiling is a quarter of the window (prompt and output share it).
"""

from __future__ import annotations

from typing import Any

from openbot.agent.models.catalog import ModelFacts
from openbot.agent.models.openai.endpoint import DEFAULT_WINDOW, Endpoint
from openbot.agent.models.openai.errors import REACH_HINT
from openbot.agent.models.outage import unresolved
from openbot.config.model_names import ModelName
from openbot.errors import UsageError

# (input window, largest output) by longest name prefix; OpenAI's model pages, as read 2025-12.
WINDOWS: dict[str, tuple[int, int]] = {
    "gpt-5": (272_000, 128_000),  # 400k total: 272k in + 128k out (gpt-5, 5.1, 5.2, codex variants)
    "gpt-4.1": (1_047_576, 32_768),
    "gpt-4o": (128_000, 16_384),
    "o1": (200_000, 100_000),
    "o3": (200_000, 100_000),
    "o4-mini": (200_000, 100_000),
    "codex-mini": (200_000, 100_000),
}
OPENAI_DEFAULT = (128_000, 32_000)  # an OpenAI model no row knows (a new one): a conservative guess
WINDOW_FIELDS = ("max_model_len", "max_context_length", "context_length", "context_window")


def known_window(target: str) -> tuple[int, int] | None:
    key = max((k for k in WINDOWS if target.startswith(k)), key=len, default="")
    return WINDOWS[key] if key else None


def lookup(name: ModelName, endpoint: Endpoint, client: Any = None) -> ModelFacts:
    """The model's facts; UsageError (exit 2) when the server answers but does not know the model."""
    import openai

    api = client or endpoint.client(max_retries=1, timeout=15)
    try:
        if name.backend == "openai":
            listed = api.models.retrieve(name.target).model_dump()
        else:
            listed = _find(name, endpoint, [m.model_dump() for m in api.models.list()])
    except openai.NotFoundError:
        raise UsageError(
            f"unknown model {name.target!r}: {endpoint.shown_url} does not know it",
            hint="check the model name in config.md or --model",
        ) from None
    except (openai.APIConnectionError, openai.APIStatusError) as e:
        dns = unresolved(e, endpoint.shown_url, REACH_HINT)
        note = f"{endpoint.shown_url} did not answer at start ({type(e).__name__}); the run waits for it"
        if dns is not None:
            note = f"could not check model {name.target!r}: {dns.detail}; {dns.hint}"
        window = _window(name, endpoint, {})
        return ModelFacts(str(name), window, _ceiling(name, window), known=False, note=note)
    window = _window(name, endpoint, listed)
    return ModelFacts(str(name), max_input_tokens=window, max_tokens=_ceiling(name, window))


def _ceiling(name: ModelName, window: int) -> int | None:
    """The largest output to ask for. A compatible server counts max_tokens inside the window (vLLM
    refuses prompt + max_tokens > window): a quarter of it leaves the prompt room."""
    if name.backend == "openai":
        return (known_window(name.target) or OPENAI_DEFAULT)[1]
    return max(1024, window // 4)


def _find(name: ModelName, endpoint: Endpoint, models: list[dict[str, object]]) -> dict[str, object]:
    for entry in models:
        if entry.get("id") in (name.target, f"{name.target}:latest"):
            return entry
    shown = ", ".join(str(m.get("id")) for m in models[:8]) or "none"
    pull = f" (ollama pull {name.target})" if name.server == "ollama" else ""
    raise UsageError(
        f"model {name.target!r} is not served by {endpoint.shown_url}{pull}",
        hint=f"the server lists: {shown}",
    )


def _window(name: ModelName, endpoint: Endpoint, listed: dict[str, object]) -> int:
    for key in WINDOW_FIELDS:
        value = listed.get(key)
        if isinstance(value, int) and value > 0:
            return value
    if name.backend == "openai":
        return endpoint.context_window or (known_window(name.target) or OPENAI_DEFAULT)[0]
    return endpoint.context_window or DEFAULT_WINDOW
