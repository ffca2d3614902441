"""Server-side compaction as the fake API does it (docs: "Compaction at a token threshold", beta
`compact-2026-01-12`): a request whose `context_management` carries a `compact_20260112` edit, and whose
live context reaches the edit's trigger, gets a reply that starts with a `compaction` block; everything
before the newest compaction block of a request is ignored, for its size as for the model.

The usage of a compacting request is the API's: the top-level counts are the reply's own pass (made from
the summary), `iterations` lists the summarising pass and the reply's pass, and the bill is their sum.
Wire shapes from the SDK (anthropic/types/beta/beta_compaction_block.py,
beta_compaction_content_block_delta.py, beta_compaction_iteration_usage.py, lib/streaming/_beta_messages.py).
"""

from __future__ import annotations

import copy
from typing import Any

from openbot.testing.fakeapi import wire
from openbot.testing.fakeapi.script import Reply

BETA = "compact-2026-01-12"
SUMMARY_CHARS = 400


def trigger(body: dict[str, Any]) -> int | None:
    """The compact_20260112 edit's input-token trigger, or None when the request asks for no compaction."""
    for edit in (body.get("context_management") or {}).get("edits") or []:
        if edit.get("type") == "compact_20260112":
            return int((edit.get("trigger") or {}).get("value") or 150_000)
    return None


def missing_beta(body: dict[str, object], headers: dict[str, str]) -> str:
    """The 400 for a compaction edit sent without its beta header (the API's words), or ""."""
    if trigger(body) is None:
        return ""
    sent = {k.lower(): v for k, v in headers.items()}
    betas = {b.strip() for b in sent.get("anthropic-beta", "").split(",")}
    return "" if BETA in betas else f"context_management: compact_20260112 requires the {BETA} beta header"


def live(body: dict[str, Any]) -> dict[str, Any]:
    """The request as the model sees it: what precedes the newest compaction block is dropped."""
    messages = body.get("messages") or []
    for i in range(len(messages) - 1, -1, -1):
        content = messages[i].get("content")
        blocks = content if isinstance(content, list) else []
        at = [j for j, b in enumerate(blocks) if isinstance(b, dict) and b.get("type") == "compaction"]
        if at:
            first = {**messages[i], "content": blocks[at[-1] :]}
            return {**body, "messages": [first, *messages[i + 1 :]]}
    return body


def apply(item: Reply, body: dict[str, Any], usage: dict[str, Any]) -> tuple[Reply, dict[str, Any]]:
    """(the reply, its usage), compacted first when the live context has reached the trigger."""
    limit = trigger(body)
    size = wire.prompt_tokens(live(body))
    if limit is None or size < limit:
        return item, usage
    n = len(body.get("messages") or [])
    summary = f"Summary of the conversation so far ({n} messages, ~{size} tokens): " + "the work " * 40
    block = {"type": "compaction", "content": summary[:SUMMARY_CHARS]}
    compacted = copy.copy(item)
    compacted.content = [block, *item.content]
    last = body["messages"][-1] if body.get("messages") else {}
    after = wire.prompt_tokens({"messages": [{"role": "user", "content": [block]}, last]})
    summarising = {
        "type": "compaction",
        "input_tokens": size,
        "output_tokens": wire.tokens(len(block["content"])),
        "cache_read_input_tokens": 0,
        "cache_creation_input_tokens": 0,
    }
    own = {
        "type": "message",
        "input_tokens": after,
        "output_tokens": usage.get("output_tokens", 1),
        "cache_read_input_tokens": 0,
        "cache_creation_input_tokens": 0,
    }
    top = {**{k: v for k, v in own.items() if k != "type"}, "iterations": [summarising, own]}
    return compacted, top
