"""Where an OpenAI-SDK model is served, with which key, window and prices: one `Endpoint` per run.

Built from the bot config and the environment:

    base URL   config `base_url` > OPENAI_BASE_URL (openai: and openai-compatible: only) > the server
               kind's local default (ollama: http://localhost:11434/v1, …) > api.openai.com (openai:)
    key        the variable `api_key_env` names, else OPENAI_API_KEY for openai: (required there);
               local and compatible servers get no key unless `api_key_env` names one — the OpenAI key is
               never sent to another server unasked
    window     the server's model listing where it says (catalog.py), else `context_window`, else
               DEFAULT_WINDOW
    prices     openai: models from the pricing table; other servers cost 0 unless the config gives
               `price_in_per_mtok` / `price_out_per_mtok`
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from openbot.agent.models.base import ModelOptions
from openbot.config.keys import BotConfig
from openbot.config.model_names import COMPATIBLE, ModelName
from openbot.errors import UsageError

KEY_VAR = "OPENAI_API_KEY"
BASE_URL_VAR = "OPENAI_BASE_URL"
NO_KEY = "not-needed"  # the SDK insists on a non-empty key; servers without auth ignore it
DEFAULT_WINDOW = 32_768  # a local model's window when neither its server nor the config says


@dataclass(frozen=True)
class CallSettings:
    """What one streamed call (`responses.stream_reply`, `chat.stream_reply`) needs of the backend."""

    target: str  # the model's id on its server
    label: str  # the model's name as replies record it ("ollama:qwen3")
    options: ModelOptions
    client: Any  # the SDK's `openai.OpenAI`


@dataclass(frozen=True)
class Endpoint:
    protocol: str  # "responses" | "chat"
    base_url: str  # "" = the SDK's default (api.openai.com)
    key_var: str  # the environment variable holding the key, "" = none
    context_window: int = 0  # from the config; 0 = not given
    price_input: float = 0.0  # USD per million tokens (chat servers only; openai: uses the table)
    price_output: float = 0.0

    @property
    def key(self) -> str:
        return os.environ.get(self.key_var, "") if self.key_var else ""

    @property
    def shown_url(self) -> str:
        return self.base_url or "https://api.openai.com/v1"

    def client(self, *, max_retries: int = 0, timeout: float | None = None) -> Any:
        import openai  # slow (~1 s): only when a call is made

        kwargs: dict[str, Any] = {"api_key": self.key or NO_KEY, "max_retries": max_retries}
        if self.base_url:
            kwargs["base_url"] = self.base_url
        if timeout is not None:
            kwargs["timeout"] = timeout
        return openai.OpenAI(**kwargs)


def endpoint_for(
    name: ModelName, config: BotConfig | None = None, environ: Mapping[str, str] | None = None
) -> Endpoint:
    """The endpoint of an openai:/chat model; UsageError (exit 2) when its key or URL is missing."""
    env = os.environ if environ is None else environ
    config = config or BotConfig()
    base_url = config.base_url
    if not base_url and name.server in ("openai", COMPATIBLE):
        base_url = env.get(BASE_URL_VAR, "")
    base_url = (base_url or name.default_base_url).rstrip("/")
    key_var = config.api_key_env
    if name.backend == "openai":
        key_var = key_var or KEY_VAR
        if not env.get(key_var):
            raise UsageError(
                f"{key_var} is not set; model {str(name)!r} needs it",
                hint=f"export {key_var}=… (an OpenAI API key), or use a local model such as ollama:<model>",
            )
    elif not base_url:
        raise UsageError(
            f"model {str(name)!r} names no server: set base_url in the bot's config.md or {BASE_URL_VAR}",
            hint='e.g. base_url = "http://localhost:8000/v1"',
        )
    elif key_var and not env.get(key_var):
        raise UsageError(
            f"{key_var} is not set; api_key_env names it as the key of {base_url}",
            hint=f"export {key_var}=…, or remove api_key_env if the server needs no key",
        )
    return Endpoint(
        protocol="responses" if name.backend == "openai" else "chat",
        base_url=base_url,
        key_var=key_var,
        context_window=config.context_window,
        price_input=config.price_in_per_mtok,
        price_output=config.price_out_per_mtok,
    )
