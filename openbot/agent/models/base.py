"""The seam between the turn engine and any model: request, reply, usage, and the backend Protocol.

Conversations use the Anthropic Messages format for every backend (`state.messages`: a list of
`{"role": ..., "content": [blocks]}`): it is what is sent, what is saved, and what is resumed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from openbot.errors import ModelError
from openbot.events import EventSink, Notice
from openbot.state.messages import Block, Message, ToolUseBlock


@dataclass(frozen=True)
class ToolSpec:
    """One tool as the model sees it: a name, a description and a JSON schema for its input."""

    name: str
    description: str
    input_schema: dict[str, Any]

    def to_api(self) -> dict[str, object]:
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema}


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float = 0.0
    cache_write_1h_tokens: int = 0  # the part of cache_write_tokens written with the 1-hour TTL
    cost_known: bool = True  # False once any call was priced without a known price (shown as "?")
    # The context the reply was made from, when it is not what was billed: a request in which the API
    # compacted the conversation bills the summarising pass too (`usage.iterations`). 0: prompt_tokens.
    context_tokens: int = 0

    def add(self, other: Usage) -> None:
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cache_read_tokens += other.cache_read_tokens
        self.cache_write_tokens += other.cache_write_tokens
        self.cache_write_1h_tokens += other.cache_write_1h_tokens
        self.cost_usd += other.cost_usd
        self.cost_known = self.cost_known and other.cost_known

    def billed_with(self, earlier: Usage) -> Usage:
        """This reply's usage plus what `earlier` attempts cost; the context stays this reply's."""
        total = Usage()
        total.add(earlier)
        total.add(self)
        total.context_tokens = self.context_size
        return total

    @property
    def prompt_tokens(self) -> int:
        """The size of the request as the API counted it (input + cache read + cache write)."""
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens

    @property
    def context_size(self) -> int:
        """How large the conversation was for the model as it replied (what decides compaction)."""
        return self.context_tokens or self.prompt_tokens

    @property
    def budget_tokens(self) -> int:
        """What `max_tokens` counts: input, output and cache writes. A cache read is the same prefix read
        again at a tenth of the price; counting it would make the budget grow with the square of the
        conversation's length, so a long run would stop at a small fraction of what was processed."""
        return self.input_tokens + self.output_tokens + self.cache_write_tokens

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


@dataclass(frozen=True)
class ModelOptions:
    """The knobs of a model call (config keys of the same names; see openbot.config.botconfig)."""

    max_output_tokens: int = 32_000  # thinking counts toward it
    effort: str = ""  # "" = the model's default, else low | medium | high | xhigh | max
    thinking: str = ""  # "" = the model's default, "off", "adaptive", or a budget in tokens ("8000")
    cache_ttl: str = "5m"  # "5m" | "1h"
    patience_secs: float = 1800.0  # how long outages (429/529/5xx/cut or stalled streams) are waited out
    read_timeout_secs: float = 90.0  # silence on a stream longer than this is a stall
    first_token_secs: float = 0.0  # silence allowed before the first token; 0 = auto (openai/backend.py)
    # Input tokens at which the API compacts the conversation itself (server-side compaction, for models
    # whose Models API entry supports `compact_20260112`); 0 = openbot's own compaction only.
    compaction_trigger: int = 0
    # Sampling (config keys temperature, top_p, seed); None = the server's default. Chat Completions and
    # the Responses API (no seed) send them; the Messages API takes none (a config error).
    temperature: float | None = None
    top_p: float | None = None
    seed: int | None = None


@dataclass
class ModelRequest:
    system: str
    tools: list[ToolSpec]
    messages: list[Message]
    max_tokens: int = 8192
    deadline: float | None = None  # time.monotonic() when the wall-time budget runs out
    # The same state was answered the same way this many times in a row (work_mode edits: a file sent back
    # unchanged): sample differently, where the bot set no temperature or seed (Chat Completions)
    resample: int = 0
    draw: int = 0  # the seed then: every resample's own, never one used before in the session (0: resample)


TRUNCATED = ("max_tokens", "model_context_window_exceeded")


@dataclass
class ModelReply:
    """One complete assistant message: content blocks (thinking / text / tool_use) exactly as received,
    why it stopped, what it cost. `defect` says why the reply cannot be used as it is (e.g. tool input
    that is not JSON); `stop_details` is the API's refusal detail (type, category, explanation)."""

    content: list[Block]
    stop_reason: str
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    stop_details: dict[str, Any] | None = None
    defect: str = ""

    @property
    def truncated(self) -> bool:
        """Cut at the output limit or the context window: a tool call in it may be incomplete."""
        return self.stop_reason in TRUNCATED

    @property
    def empty(self) -> bool:
        """Nothing usable: no text and no tool call (e.g. spent entirely on thinking)."""
        return not self.text.strip() and not self.tool_uses

    @property
    def tool_uses(self) -> list[ToolUseBlock]:
        return [b for b in self.content if b["type"] == "tool_use"]

    @property
    def text(self) -> str:
        return "\n".join(b["text"] for b in self.content if b["type"] == "text" and b["text"])


def with_room(ask: Callable[[int], ModelReply], limit: int, ceiling: int, sink: EventSink) -> ModelReply:
    """`ask(limit)`'s reply; one cut at the output limit with a tool call (or nothing usable) in it is asked
    again with twice the room, up to `ceiling`, with a notice. Every ask is billed; the context is the
    last reply's."""
    spent = Usage()
    while True:
        reply = ask(limit)
        bigger = min(limit * 2, ceiling)
        if not (reply.truncated and (reply.tool_uses or reply.empty) and bigger > limit):
            reply.usage = reply.usage.billed_with(spent)
            return reply
        spent.add(reply.usage)
        sink.emit(
            Notice(
                kind="reply_truncated",
                message=f"the reply was cut at {limit:,} output tokens ({reply.stop_reason}) with an "
                f"unfinished tool call; nothing in it was run; asking again with {bigger:,}",
                data={"max_tokens": limit, "retry_max_tokens": bigger, "stop_reason": reply.stop_reason},
            )
        )
        limit = bigger


class ModelBackend(Protocol):
    """Anything that turns a request into one assistant reply, streaming text to `sink` as it arrives."""

    @property
    def model(self) -> str: ...  # the name of the model answering now (a fallback chain switches)

    def complete(self, request: ModelRequest, sink: EventSink) -> ModelReply: ...


class PromptTooLong(ModelError):
    """The API said the prompt is over the model's window (HTTP 400 "prompt is too long: N > M")."""

    def __init__(self, message: str, tokens: int, maximum: int, usage: Usage | None = None) -> None:
        super().__init__(message, hint="openbot compacts the conversation and retries", usage=usage)
        self.tokens, self.maximum = tokens, maximum
