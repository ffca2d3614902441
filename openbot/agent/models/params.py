"""The `messages.stream` kwargs for a request: knobs, and prompt-cache breakpoints on copies of its data.

Prompt caching uses explicit breakpoints (at most 4): the last tool, the system block, the newest
message and the user message before it, which ended the previous request, so each call reads the
previous call's prefix from the cache. The caller's messages are copied, never marked; apart from the
markers (which the API's cache and its thinking-signature check ignore) the request carries every
message exactly as stored, so assistant turns go back exactly as they were received.

Knobs (docs: "Extended thinking", "Adaptive thinking", "Effort", "Prompt caching"): `thinking` is
`{"type": "disabled" | "adaptive"}` or `{"type": "enabled", "budget_tokens": N}` (N ≥ 1024 and below
max_tokens); `effort` goes in `output_config`; the 1-hour cache TTL is `{"type": "ephemeral", "ttl": "1h"}`.

Server-side compaction (docs: "Compaction", beta `compact-2026-01-12`): `context_management` carries a
`compact_20260112` edit with an `input_tokens` trigger; the reply then starts with a `compaction` block,
which is stored and sent back like any block (the API ignores everything before it), so the conversation
stays append-only.
"""

from __future__ import annotations

import json
import operator
from typing import cast

from openbot.agent.models.base import ModelOptions, ModelRequest
from openbot.config.keys import BotConfig
from openbot.state.messages import Block, CacheControl, Message, TextBlock, blocks_of, text_block

UNMARKABLE = ("thinking", "redacted_thinking")
COMPACTION_BETA = "compact-2026-01-12"
MIN_COMPACTION_TRIGGER = 50_000  # the API's lowest accepted trigger
MIN_THINKING_BUDGET = 1024


def cache_marker(ttl: str) -> CacheControl:
    return {"type": "ephemeral", "ttl": "1h"} if ttl == "1h" else {"type": "ephemeral"}


def thinking_param(thinking: str, max_tokens: int) -> dict[str, object] | None:
    """The `thinking` kwarg for the option's value, or None to leave the model's default."""
    if not thinking:
        return None
    if thinking == "off":
        return {"type": "disabled"}
    if thinking == "adaptive":
        return {"type": "adaptive"}
    budget = max(MIN_THINKING_BUDGET, min(int(thinking), max_tokens - 1))
    return {"type": "enabled", "budget_tokens": budget}


def build_params(
    model: str, request: ModelRequest, options: ModelOptions | None = None, prepared: Prepared | None = None
) -> dict[str, object]:
    """The `messages.stream` kwargs for `request`, with cache breakpoints on copies of its data;
    `prepared` keeps what earlier calls prepared of the same conversation."""
    opts = options or ModelOptions()
    marker = cache_marker(opts.cache_ttl)
    params: dict[str, object] = {"model": model, "max_tokens": request.max_tokens}
    if request.tools:
        tools = [t.to_api() for t in request.tools]
        tools[-1] = {**tools[-1], "cache_control": dict(marker)}
        params["tools"] = tools
    if request.system:
        params["system"] = [{"type": "text", "text": request.system, "cache_control": dict(marker)}]
    params["messages"] = (prepared or Prepared()).marked(request.messages, marker)
    thinking = thinking_param(opts.thinking, request.max_tokens)
    if thinking is not None:
        params["thinking"] = thinking
    if opts.effort:
        params["output_config"] = {"effort": opts.effort}
    if opts.compaction_trigger:
        trigger = max(MIN_COMPACTION_TRIGGER, opts.compaction_trigger)
        edit = {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": trigger}}
        params["context_management"] = {"edits": [edit]}
        params["betas"] = [COMPACTION_BETA]
    return params


def marked_messages(messages: list[Message], marker: CacheControl | None = None) -> list[Message]:
    """Block-list content with breakpoints on the newest message and the user message before it; any
    other marker is dropped, so the request never carries more than 4. The conversation is not changed:
    a message is copied only where it differs (not the whole conversation on every call)."""
    return Prepared().marked(messages, marker or cache_marker("5m"))


class Encoded(list[Message]):
    """Messages as sent, with the JSON of each (`fragments`): `encode_body` joins those instead of
    encoding the whole conversation again."""

    fragments: list[str]


def encode(value: object) -> str:
    """JSON as the request body carries it (the encoding `encode_body` must reproduce byte for byte)."""
    return json.dumps(value, ensure_ascii=False)


def encode_body(body: dict[str, object]) -> str:
    """`encode(body)`, byte for byte, with an `Encoded` value spliced from its fragments."""
    parts = []
    for key, value in body.items():
        text = f"[{', '.join(value.fragments)}]" if isinstance(value, Encoded) else encode(value)
        parts.append(f"{encode(key)}: {text}")
    return "{" + ", ".join(parts) + "}"


class Prepared:
    """The conversation as sent, kept from call to call (one per backend): each stored message's unmarked
    form and its JSON. A call prepares only the messages it has not seen (by identity: stored messages
    are never changed in place, a change replaces the message) and the two it marks; what every call
    repeats is copying references and joining text, which is the serialising itself."""

    def __init__(self) -> None:
        self._seen: list[Message] = []  # the conversation's messages, as last given
        self._sent: list[Message] = []  # each without markers (the same object when it had none)
        self._json: list[str] = []
        self.prepared = 0  # messages scanned and encoded so far: the work tests count

    def marked(self, messages: list[Message], marker: CacheControl) -> Encoded:
        self._sync(messages)
        out = Encoded(self._sent)
        out.fragments = list(self._json)
        newest = len(out) - 1
        previous_user = next((i for i in range(newest - 1, -1, -1) if out[i]["role"] == "user"), None)
        for i in (newest, previous_user):
            if i is not None and i >= 0:
                blocks = [cast(Block, dict(b)) for b in blocks_of(out[i])]
                out[i] = {"role": out[i]["role"], "content": blocks}
                _mark_last_block(blocks, marker)
                out.fragments[i] = encode(out[i])
                self.prepared += 1
        return out

    def _sync(self, messages: list[Message]) -> None:
        """Keep what is unchanged at the front; prepare the rest."""
        seen = self._seen
        same = len(seen) <= len(messages) and all(map(operator.is_, seen, messages))
        if not same:
            pairs = enumerate(zip(seen, messages, strict=False))
            keep = next((i for i, (a, b) in pairs if a is not b), min(len(seen), len(messages)))
        else:
            keep = len(seen)
        del seen[keep:], self._sent[keep:], self._json[keep:]
        for msg in messages[keep:]:
            sent = _unmarked(msg)
            seen.append(msg)
            self._sent.append(sent)
            self._json.append(encode(sent))
            self.prepared += 1


def _unmarked(msg: Message) -> Message:
    content = msg["content"]
    if isinstance(content, str):
        # Always blocks, never a bare string: the cached prefix must be byte-stable across calls.
        return {"role": msg["role"], "content": [text_block(content)]}
    if any("cache_control" in b or b["type"] == "openai_reasoning" for b in content):
        # An OpenAI reasoning item (a fallback model's, or a run resumed on Claude) means nothing here.
        kept = [b for b in content if b["type"] != "openai_reasoning"]
        blocks = [cast(Block, {k: v for k, v in b.items() if k != "cache_control"}) for b in kept]
        return {"role": msg["role"], "content": blocks}
    return msg


def _mark_last_block(content: list[Block], marker: CacheControl) -> None:
    blocks = [b for b in content if b["type"] not in UNMARKABLE]
    last = blocks[-1] if blocks else None
    if last is not None and not (last["type"] == "text" and not last["text"]):
        # Every block kind left here may carry a marker (thinking blocks cannot, and were left out).
        cast(TextBlock, last)["cache_control"] = marker.copy()


LONG_WAIT_SECS = 300  # the 5-minute cache would expire during a wait this long


SERVER_TRIGGER = 0.75  # of the window: the API compacts before openbot's own fallback would (0.8)


def options_from(
    config: BotConfig, output_ceiling: int | None = None, server_window: int | None = None
) -> ModelOptions:
    """The model knobs of a bot config.

    `server_window` is the window of a model whose API compacts conversations itself (None: it cannot);
    the bot's `server_compaction = false` keeps compaction openbot's own.

    `cache_ttl = "auto"` takes the 1-hour TTL when a command may run, or the bot may sleep, longer than 5
    minutes: the 5-minute cache would expire meanwhile, and every wait would rewrite the whole prefix."""
    ttl = config.cache_ttl
    if ttl == "auto":
        ttl = "1h" if max(config.command_timeout_secs, config.sleep_secs) > LONG_WAIT_SECS else "5m"
    limit = config.max_output_tokens
    return ModelOptions(
        max_output_tokens=min(limit, output_ceiling) if output_ceiling else limit,
        effort=config.effort,
        thinking=config.thinking,
        cache_ttl=ttl,
        patience_secs=config.api_patience_minutes * 60,
        read_timeout_secs=config.stall_timeout_secs,
        first_token_secs=config.first_token_timeout_secs,
        compaction_trigger=server_trigger(config, server_window),
        temperature=config.temperature,
        top_p=config.top_p,
        seed=config.seed,
    )


def server_trigger(config: BotConfig, window: int | None) -> int:
    """The input tokens at which the API should compact the conversation, or 0 (openbot's own only)."""
    if not window or not config.server_compaction:
        return 0
    trigger = max(MIN_COMPACTION_TRIGGER, int(window * SERVER_TRIGGER))
    return trigger if trigger < window * 0.9 else 0  # a window too small for the API's lowest trigger
