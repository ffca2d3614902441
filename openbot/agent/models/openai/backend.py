"""The OpenAI-SDK backend: `openai:` models on the Responses API, other servers on Chat Completions.

The same call discipline as `anthropic.AnthropicModel`: the SDK's retries are off and openbot waits out
outages itself (`outage.Patience`: every wait an event, within `api_patience_minutes` and the budgets);
a broken stream re-sends the whole request and its partial reply is discarded, so no tool runs from half
a reply; a reply cut at the output limit holding a tool call is asked again with twice the limit; tool
arguments that are not a JSON object come back as a `defect` (the turn re-asks). One streamed call per
attempt is `responses` or `chat`; errors are judged by `errors`.
"""

from __future__ import annotations

import json
from dataclasses import replace

from openbot.agent.models.base import ModelOptions, ModelReply, ModelRequest, Usage, with_room
from openbot.agent.models.openai.endpoint import CallSettings, Endpoint
from openbot.agent.models.openai.errors import classify
from openbot.agent.models.outage import Outage, Patience, with_patience
from openbot.agent.models.pricing import price_usage
from openbot.config.model_names import ModelName
from openbot.events import EventSink

OUTPUT_CEILING = 128_000  # the largest max output tokens a retry asks for, unless the model allows less
# A CPU server sends nothing while it reads the prompt: 35-50 tokens a second on 2 cores (docs/MODELS.md);
# a quarter of that leaves room for a slower machine or a busier server.
PREFILL_TOKENS_PER_SEC = 10


def read_timeout(options: ModelOptions, request: ModelRequest, chat: bool) -> float:
    """How long a silent stream is waited for: `stall_timeout_secs`, or the first-token allowance where it
    is longer (`first_token_timeout_secs`; auto: on Chat Completions servers, the stall timeout plus the
    prompt's estimated tokens at PREFILL_TOKENS_PER_SEC). One read timeout covers the whole stream (the
    SDK has no other), so a local server's stall mid-reply is noticed after the same allowance."""
    if options.first_token_secs:
        return max(options.read_timeout_secs, options.first_token_secs)
    if not chat:
        return options.read_timeout_secs
    size = (
        len(request.system)
        + len(json.dumps(request.messages))
        + len(json.dumps([t.to_api() for t in request.tools]))
    )
    return options.read_timeout_secs + size / 4 / PREFILL_TOKENS_PER_SEC


class OpenAIModel:
    def __init__(
        self,
        name: ModelName,
        endpoint: Endpoint,
        *,
        options: ModelOptions | None = None,
        max_attempts: int = 0,
        backoff_secs: float = 1.0,
        max_output_tokens: int = OUTPUT_CEILING,
    ) -> None:
        self.name = name
        self.model = str(name)
        self.endpoint = endpoint
        self.options = options or ModelOptions()
        self.max_attempts = max_attempts
        self.backoff_secs = backoff_secs
        self.output_ceiling = max_output_tokens
        self._client: object = None

    @property
    def client(self) -> object:
        if self._client is None:
            self._client = self.endpoint.client()
        return self._client

    def complete(self, request: ModelRequest, sink: EventSink) -> ModelReply:
        """The reply to `request`; a truncated reply holding a tool call is asked again with more room."""
        limit = min(request.max_tokens, self.output_ceiling)
        return with_room(
            lambda room: self._complete_once(request, room, sink), limit, self.output_ceiling, sink
        )

    def _complete_once(self, request: ModelRequest, max_tokens: int, sink: EventSink) -> ModelReply:
        request = replace(request, max_tokens=max_tokens)
        patience = Patience(
            self.options.patience_secs,
            request.deadline,
            max_attempts=self.max_attempts,
            backoff_secs=self.backoff_secs,
        )

        def attempt(billed: Usage) -> ModelReply:
            reply = self._attempt(request, sink, billed, patience)
            reply.usage = self.priced(reply.usage)
            return reply

        def classified(e: Exception, failed: Usage) -> Outage:
            return classify(e, failed, self.endpoint.shown_url, self.endpoint.key_var)

        return with_patience(attempt, classified, self.priced, patience, sink)

    def _attempt(
        self, request: ModelRequest, sink: EventSink, billed: Usage, patience: Patience
    ) -> ModelReply:
        left = patience.remaining()
        read = read_timeout(self.options, request, self.endpoint.protocol == "chat")
        timeout = read if left is None else min(read, left)
        if self.endpoint.protocol == "responses":
            from openbot.agent.models.openai.responses import stream_reply
        else:
            from openbot.agent.models.openai.chat import stream_reply
        call = CallSettings(self.name.target, self.model, self.options, self.client)
        return stream_reply(call, request, sink, billed, patience, timeout)

    def priced(self, usage: Usage) -> Usage:
        """`usage` with its cost: the pricing table for openai:, the config's prices (or 0) elsewhere."""
        if self.name.backend == "openai":
            return price_usage(self.name.target, usage)
        per_token_in, per_token_out = self.endpoint.price_input / 1e6, self.endpoint.price_output / 1e6
        cost = (
            usage.input_tokens + usage.cache_read_tokens
        ) * per_token_in + usage.output_tokens * per_token_out
        return replace(usage, cost_usd=cost, cost_known=True)
