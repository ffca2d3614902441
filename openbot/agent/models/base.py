"""The seam between the turn engine and any model: request, reply, usage, and the backend Protocol.

Conversations use the Anthropic Messages format for every backend (a list of
`{"role": ..., "content": [blocks]}` dicts): it is what is sent, what is saved, and what is resumed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from openbot.events import EventSink


@dataclass(frozen=True)
class ToolSpec:
    """One tool as the model sees it: a name, a description and a JSON schema for its input."""

    name: str
    description: str
    input_schema: dict[str, Any]

    def to_api(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema}


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float = 0.0

    def add(self, other: Usage) -> None:
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cache_read_tokens += other.cache_read_tokens
        self.cache_write_tokens += other.cache_write_tokens
        self.cost_usd += other.cost_usd

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens + self.cache_read_tokens + self.cache_write_tokens

    def as_dict(self) -> dict[str, int]:
        return {
            "input": self.input_tokens,
            "output": self.output_tokens,
            "cache_read": self.cache_read_tokens,
            "cache_write": self.cache_write_tokens,
        }


@dataclass
class ModelRequest:
    system: str
    tools: list[ToolSpec]
    messages: list[dict[str, Any]]
    max_tokens: int = 8192


@dataclass
class ModelReply:
    """One complete assistant message: content blocks (text / tool_use), why it stopped, what it cost."""

    content: list[dict[str, Any]]
    stop_reason: str
    usage: Usage = field(default_factory=Usage)
    model: str = ""

    @property
    def tool_uses(self) -> list[dict[str, Any]]:
        return [b for b in self.content if b.get("type") == "tool_use"]

    @property
    def text(self) -> str:
        return "\n".join(b["text"] for b in self.content if b.get("type") == "text" and b.get("text"))


class ModelBackend(Protocol):
    """Anything that turns a request into one assistant reply, streaming text to `sink` as it arrives."""

    model: str

    def complete(self, request: ModelRequest, sink: EventSink) -> ModelReply: ...


def load_backend(model: str) -> ModelBackend:
    """`scripted:<path>` → the scripted backend; anything else → Anthropic (imported only here)."""
    if model.startswith("scripted:"):
        from openbot.agent.models.scripted import ScriptedModel

        return ScriptedModel.from_file(model.removeprefix("scripted:"))
    from openbot.agent.models.anthropic import AnthropicModel

    return AnthropicModel(model)


def is_scripted(model: str) -> bool:
    return model.startswith("scripted:")
