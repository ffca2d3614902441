"""Keeping a long run's conversation inside the model's context window.

Before a model call would exceed ~80 % of the window, older tool outputs are replaced with short stubs
saying where the full text is (the session's events.jsonl and output files). The system prompt, the
current iteration's prompt and the most recent exchanges are kept whole. Stubbing is done in place and
sticks, so the prompt prefix stays byte-stable (and cache-friendly) between compactions.
"""

from __future__ import annotations

import json
from typing import Any

CONTEXT_WINDOW = 200_000  # tokens; the Claude models openbot targets
TRIGGER = 0.8
TARGET = 0.5
KEEP_RECENT = 6  # messages at the end that are never stubbed
STUB_MIN_CHARS = 400


def estimate_tokens(obj: Any) -> int:
    """A cheap, conservative estimate: ~4 characters per token, a non-ASCII character as its \\u escape
    (tokenizers spend more than one token on most of them)."""
    text = json.dumps(obj)
    return len(text) // 4 + 1


def _stub(block: dict[str, Any]) -> dict[str, Any] | None:
    content = block.get("content")
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    if len(text) < STUB_MIN_CHARS:
        return None
    stub = (
        f"[{len(text):,} characters of earlier tool output elided to keep the context small; the full text "
        f"is in this session's history (session_history tool, tool_use_id {block.get('tool_use_id')})]"
    )
    return {**block, "content": stub}


class ContextKeeper:
    """Tracks the conversation's estimated size and compacts it in place when it grows too large."""

    def __init__(self, window: int = CONTEXT_WINDOW, fixed_tokens: int = 0) -> None:
        self.window = window
        self.fixed_tokens = fixed_tokens  # system prompt + tool definitions, until the API has counted
        self._sizes: list[int] = []
        self._counted: tuple[int, int] | None = None  # (prompt tokens the API counted, messages sent)

    def observe(self, prompt_tokens: int, messages_sent: int) -> None:
        """Record the API's own count of the last request (input + cache read + cache write)."""
        if prompt_tokens > 0:
            self._counted = (prompt_tokens, messages_sent)

    def _measure(self, messages: list[dict[str, Any]]) -> int:
        # Only the newest message can change in place; earlier sizes are cached.
        del self._sizes[max(len(self._sizes) - 1, 0) :]
        self._sizes.extend(estimate_tokens(m) for m in messages[len(self._sizes) :])
        if self._counted is not None and self._counted[1] <= len(messages):
            # The size that decides is the API's: what it counted, plus an estimate of what came since.
            counted, sent = self._counted
            return counted + sum(self._sizes[sent:])
        return self.fixed_tokens + sum(self._sizes)

    def maybe_compact(self, messages: list[dict[str, Any]], keep_from: int) -> int:
        """Stub old tool outputs if the estimate exceeds TRIGGER of the window; returns tokens saved.

        `keep_from` is the index of the current iteration's prompt message: it is never stubbed."""
        total = self._measure(messages)
        if total <= self.window * TRIGGER:
            return 0
        saved = 0
        last_stubbable = len(messages) - KEEP_RECENT
        for i in range(last_stubbable):
            if total - saved <= self.window * TARGET:
                break
            msg = messages[i]
            if i == keep_from or msg["role"] != "user" or isinstance(msg["content"], str):
                continue
            new_content, changed = [], False
            for block in msg["content"]:
                stub = _stub(block) if block.get("type") == "tool_result" else None
                new_content.append(stub or block)
                changed = changed or stub is not None
            if changed:
                messages[i] = {**msg, "content": new_content}
                new_size = estimate_tokens(messages[i])
                saved += self._sizes[i] - new_size
                self._sizes[i] = new_size
        if saved:
            self._counted = None  # the API's count no longer describes these messages
        return saved
