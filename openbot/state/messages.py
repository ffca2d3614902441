"""The conversation's types: the Anthropic Messages format, which every backend is sent (the OpenAI backend
translates it on each call), conversation.jsonl stores and a resume reads back.

A block is one of the TypedDicts below, told apart by its `type` (`block["type"] == "text"` narrows it).
Data enters these types in three places, each after it was checked: `state.conversation` (a saved
conversation), `agent.models.anthropic.wire.plain_block` (the API's reply) and the scripted backend's
script; the OpenAI backends build their blocks themselves.
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict


class CacheControl(TypedDict):
    type: Literal["ephemeral"]
    ttl: NotRequired[str]


class TextBlock(TypedDict):
    type: Literal["text"]
    text: str
    citations: NotRequired[list[object]]
    openai_phase: NotRequired[str]  # the Responses API's phase of an assistant message, sent back as is
    cache_control: NotRequired[CacheControl]


class ThinkingBlock(TypedDict):
    type: Literal["thinking"]
    thinking: str
    signature: str  # sent back exactly as received


class RedactedThinkingBlock(TypedDict):
    type: Literal["redacted_thinking"]
    data: str


class ToolUseBlock(TypedDict):
    type: Literal["tool_use"]
    id: str
    name: str
    input: dict[str, object]
    caller: NotRequired[dict[str, object]]  # who made the call (the API's programmatic tool calling)
    cache_control: NotRequired[CacheControl]


class ToolResultBlock(TypedDict):
    type: Literal["tool_result"]
    tool_use_id: str
    content: str | list[TextBlock]
    is_error: NotRequired[bool]
    cache_control: NotRequired[CacheControl]


class CompactionBlock(TypedDict):
    """The API's own summary of the conversation before it (server-side compaction); "" if it failed."""

    type: Literal["compaction"]
    content: str | None
    encrypted_content: NotRequired[str | None]
    cache_control: NotRequired[CacheControl]


class ReasoningBlock(TypedDict):
    """An OpenAI Responses reasoning item, kept to be sent back with the calls it led to."""

    type: Literal["openai_reasoning"]
    item: dict[str, object]


SERVER_BLOCKS = (
    "server_tool_use",
    "web_search_tool_result",
    "web_fetch_tool_result",
    "code_execution_tool_result",
    "bash_code_execution_tool_result",
    "text_editor_code_execution_tool_result",
    "mcp_tool_use",
    "mcp_tool_result",
    "container_upload",
)
ServerKind = Literal[
    "server_tool_use",
    "web_search_tool_result",
    "web_fetch_tool_result",
    "code_execution_tool_result",
    "bash_code_execution_tool_result",
    "text_editor_code_execution_tool_result",
    "mcp_tool_use",
    "mcp_tool_result",
    "container_upload",
]


class ServerBlock(TypedDict):
    """A block the API made itself (its server tools' calls and results): kept and sent back as received,
    with whatever other keys it has."""

    type: ServerKind
    id: NotRequired[str]
    tool_use_id: NotRequired[str]
    cache_control: NotRequired[CacheControl]


Block = (
    TextBlock
    | ThinkingBlock
    | RedactedThinkingBlock
    | ToolUseBlock
    | ToolResultBlock
    | CompactionBlock
    | ReasoningBlock
    | ServerBlock
)
Role = Literal["user", "assistant"]


class Message(TypedDict):
    role: Role
    content: str | list[Block]


def text_block(text: str) -> TextBlock:
    return {"type": "text", "text": text}


def blocks_of(message: Message) -> list[Block]:
    """A message's content as blocks (a bare string is one text block)."""
    content = message["content"]
    return [text_block(content)] if isinstance(content, str) else content
