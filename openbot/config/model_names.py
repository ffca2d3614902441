"""The one parser of model names (docs/MODELS.md); `agent.models.registry` builds the backend a name picks:

    scripted:<path>             replays a script offline
    openai:<model>              OpenAI's Responses API (api.openai.com, or OPENAI_BASE_URL / base_url)
    openai-compatible:<model>   any OpenAI-compatible server's Chat Completions, at `base_url`
    ollama: vllm: lmstudio: llamacpp:<model>
                                Chat Completions at that server's default local URL (or `base_url`)
    gpt-*, o1*, o3*, o4*, *-codex, codex-*
                                bare OpenAI names → openai: ("5.3-codex" is "gpt-5.3-codex")
    anything else (claude-*)    a Claude model on the Anthropic API

It imports nothing heavy, so config validation and `doctor` can use it.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

SCRIPTED = "scripted:"
# Chat Completions servers a prefix names, with the URL each listens on by default.
LOCAL_SERVERS = {
    "ollama": "http://localhost:11434/v1",
    "vllm": "http://localhost:8000/v1",
    "lmstudio": "http://localhost:1234/v1",
    "llamacpp": "http://localhost:8080/v1",
}
COMPATIBLE = "openai-compatible"
_BARE_OPENAI = re.compile(r"^(gpt-|o[134](?:$|-)|codex-)|-codex(?:-[a-z]+)?$")
_VERSION_CODEX = re.compile(r"^\d+(?:\.\d+)*-codex")  # "5.3-codex", as the Rust openbot's configs say

Backend = Literal["anthropic", "scripted", "openai", "chat"]


@dataclass(frozen=True)
class ModelName:
    """A parsed model name: which backend, what it names (a model, or a script's path), and for the
    Chat Completions backend which server kind (`ollama`, …, or `openai-compatible`)."""

    backend: Backend
    target: str
    server: str = ""

    @property
    def script(self) -> Path | None:
        return Path(self.target).expanduser() if self.backend == "scripted" else None

    @property
    def is_openai(self) -> bool:
        """Served through the `openai` SDK (the Responses API or Chat Completions)."""
        return self.backend in ("openai", "chat")

    @property
    def default_base_url(self) -> str:
        """The server kind's usual URL ("" where none is implied: the SDK's default, or none at all)."""
        return LOCAL_SERVERS.get(self.server, "")

    def __str__(self) -> str:
        if self.backend == "scripted":
            return SCRIPTED + self.target
        if self.backend == "anthropic":
            return self.target
        return f"{self.server}:{self.target}"


def parse_model(name: str) -> ModelName:
    if name.startswith(SCRIPTED):
        return ModelName("scripted", name.removeprefix(SCRIPTED))
    prefix, colon, rest = name.partition(":")
    if colon and prefix == "openai":
        return ModelName("openai", rest, "openai")
    if colon and (prefix in LOCAL_SERVERS or prefix == COMPATIBLE):
        return ModelName("chat", rest, prefix)
    if _VERSION_CODEX.match(name):
        return ModelName("openai", "gpt-" + name, "openai")
    if not name.startswith("claude-") and _BARE_OPENAI.search(name):
        return ModelName("openai", name, "openai")
    return ModelName("anthropic", name)


_BACKEND_WORD = re.compile(r"[a-z][a-z0-9-]*")  # `olama`, `foo`: not Bedrock's `anthropic.claude-…:0`


def unknown_prefix(name: str) -> tuple[str, str] | None:
    """(what is wrong, a hint) when `name` starts with a `word:` that names no backend (`olama:qwen3`)."""
    prefix = name.partition(":")[0] if ":" in name else ""
    if (
        not _BACKEND_WORD.fullmatch(prefix)
        or prefix.startswith("claude")
        or parse_model(name).backend != "anthropic"
    ):
        return None
    known = [*LOCAL_SERVERS, COMPATIBLE, "openai", SCRIPTED.rstrip(":")]
    close = difflib.get_close_matches(prefix, known, n=1)
    hint = f"did you mean '{close[0]}:'? " if close else ""
    return (
        f"whose prefix '{prefix}:' names no backend",
        f"{hint}the prefixes are {', '.join(known)}; a Claude model takes none",
    )


def scripted_name(path: Path | str) -> str:
    """The model name that replays the script at `path`."""
    return f"{SCRIPTED}{path}"


def resolve_script(name: str, base_dir: Path) -> str:
    """A `scripted:` name with its path made absolute (relative paths are `base_dir`'s); others unchanged."""
    script = parse_model(name).script
    if script is None:
        return name
    return scripted_name(script if script.is_absolute() else (base_dir / script).resolve())
