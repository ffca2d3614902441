"""The 400s a changed request fixes, and the change, kept for the rest of the backend's calls.

- "Invalid `signature` in `thinking` block. The block is bound to a different conversation": a thinking
  block's prefix changed after it was made (another model's thinking after a fallback, a conversation
  resumed on another model). Re-sending cannot help — the conversation keeps the block — so, as the docs'
  "Fix a thinking block bound to a different conversation" says, every later request sets
  `thinking.block_binding.prefix_mismatch_behavior = "drop_block"` (with its beta header; `type`
  adaptive) and the API drops what no longer binds, listing it in the reply's `input_transformations`.
  A request with thinking turned off drops its thinking blocks itself instead, as the docs ask. A resumed
  run meets the 400 once more and recovers the same way (a 400 is not billed).
- "input length and `max_tokens` exceed context limit: I + M > W": the output room asked for does not
  fit beside the prompt; the call is re-sent with `max_tokens = W - I` (the prompt itself too long, less
  than `MIN_ROOM` left, is `PromptTooLong`: the turn compacts).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from openbot.agent.models.base import PromptTooLong, Usage
from openbot.agent.models.outage import Outage

BINDING_BETA = "thinking-binding-controls-2026-08-01"
BOUND = "bound to a different conversation"
NO_ROOM = re.compile(r"input length and `max_tokens` exceed context limit: (\d+) \+ (\d+) > (\d+)")
MIN_ROOM = 1024
THINKING_BLOCKS = ("thinking", "redacted_thinking")


@dataclass
class Fixes:
    drop_block: bool = False  # for the backend's lifetime: the conversation keeps what caused it
    max_tokens: int | None = None  # for one call (the next prompt has another size)
    dropped_seen: int = 0  # blocks the API said it dropped, as last reported


def fixable(status: int, message: str, fixes: Fixes, failed: Usage) -> Outage | None:
    """The re-send that fixes this 400 (the change recorded in `fixes`), or None."""
    if status != 400:
        return None
    if BOUND in message and not fixes.drop_block:
        fixes.drop_block = True
        why = "a thinking block is bound to a different conversation: re-sent with drop_block"
        return Outage("rejected", why, retry_after=0.0)
    room = NO_ROOM.search(message)
    if room is None:
        return None
    prompt, limit = int(room[1]), int(room[3])
    if limit - prompt < MIN_ROOM:
        raise PromptTooLong(f"the API rejected the request: {message}", prompt, limit, usage=failed)
    if fixes.max_tokens is not None and fixes.max_tokens <= limit - prompt:
        return None  # lowered already, and still refused: not this
    fixes.max_tokens = limit - prompt
    return Outage("rejected", f"no room for max_tokens: re-sent with {fixes.max_tokens:,}", retry_after=0.0)


def applied(params: dict[str, Any], fixes: Fixes) -> dict[str, object]:
    """`params` (freshly built, not shared) with the fixes in force."""
    if not fixes.drop_block:
        return params
    if (params.get("thinking") or {}).get("type") == "disabled":
        params["messages"] = [_unthought(m) for m in params["messages"]]
        return params
    params["thinking"] = {"type": "adaptive", "block_binding": {"prefix_mismatch_behavior": "drop_block"}}
    params["betas"] = [*(params.get("betas") or []), BINDING_BETA]
    return params


def _unthought(message: dict[str, object]) -> dict[str, object]:
    content = message.get("content")
    if message.get("role") != "assistant" or not isinstance(content, list):
        return message
    return {**message, "content": [b for b in content if b.get("type") not in THINKING_BLOCKS]}
