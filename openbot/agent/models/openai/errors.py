"""What an `openai` SDK error means for openbot: wait it out (`Outage`), compact (`PromptTooLong`), or stop.

The same rules as the Anthropic path (`anthropic._classify_status`): 408/409/429/5xx, cut and stalled
streams and mid-stream error events are outages `Patience` waits out honouring `retry-after(-ms)`;
`x-should-retry: false` is obeyed; 401/403 is a key problem; an over-long prompt is `PromptTooLong`
(OpenAI's `context_length_exceeded`, vLLM's "maximum context length is N tokens"); a server that rejects
`tools` says the model cannot call tools, which openbot needs; anything else stops the run (exit 1).
"""

from __future__ import annotations

import os
import re
from typing import Any

from openbot.agent.models.base import PromptTooLong, Usage
from openbot.agent.models.outage import Outage, retry_after, unresolved
from openbot.errors import ModelError

SECRET_VARS = ("OPENAI_API_KEY", "OPENAI_ADMIN_KEY")
REACH_HINT = "check base_url in the bot's config.md or OPENAI_BASE_URL, and the network (DNS)"
TOO_LONG = re.compile(
    r"maximum context length is (\d+) tokens(?:.*?(?:resulted in|requested) (\d+) tokens)?", re.S
)
TOO_LONG_WORDS = ("context_length_exceeded", "exceeds the context window", "exceeds the available context")
NO_TOOLS = re.compile(
    r"does not support tools|tools? (?:are|is) not supported|tool.?call\w* (?:is )?not supported", re.I
)


def scrub(text: str, key_var: str = "") -> str:
    """No error text passed on may carry a key (the server may echo the request's headers)."""
    for var in (*SECRET_VARS, key_var):
        secret = os.environ.get(var) if var else None
        if secret and len(secret) >= 8:
            text = text.replace(secret, "[redacted]")
    return text


def classify(e: Exception, failed: Usage, where: str, key_var: str = "") -> Outage:
    """A retryable cause, or raise ModelError / PromptTooLong at once for what a re-send cannot fix."""
    import httpx2
    import openai

    if isinstance(e, Outage):
        return e
    if isinstance(e, openai.APIStatusError):
        return _status(e, failed, where, key_var)
    if isinstance(e, openai.APITimeoutError | httpx2.TimeoutException):
        return Outage("unavailable", "no data from the server within the read timeout (a stalled stream)")
    if isinstance(e, openai.APIConnectionError | httpx2.TransportError):
        dns = unresolved(e, where, REACH_HINT)
        if dns is not None:
            return dns
        cause = e.__cause__ or e
        return Outage(
            "unavailable", f"cannot reach {where} ({type(cause).__name__}: {scrub(str(cause), key_var)})"
        )
    if isinstance(e, openai.APIError):  # an error object in the stream's data
        return stream_error(str(getattr(e, "code", "") or ""), scrub(e.message, key_var), failed)
    raise e


def stream_error(code: str, message: str, failed: Usage) -> Outage:
    """An error the server reported mid-stream (an `error` event, `response.failed`)."""
    _check_too_long(code, message, failed)
    if code in ("invalid_prompt", "invalid_request_error", "invalid_api_key"):
        raise ModelError(f"the server rejected the request mid-stream ({code}): {message}", usage=failed)
    kind = "rate limited" if "rate_limit" in code else "unavailable"
    return Outage(kind, f"error mid-stream ({code or 'no code'}): {message}")


def _check_too_long(code: str, message: str, failed: Usage) -> None:
    found = TOO_LONG.search(message)
    if found or any(w in code or w in message for w in TOO_LONG_WORDS):
        maximum = int(found[1]) if found else 0
        tokens = int(found[2]) if found and found[2] else 0
        raise PromptTooLong(f"the server rejected the request: {message}", tokens, maximum, usage=failed)


def _status(e: Any, failed: Usage, where: str, key_var: str) -> Outage:
    status = e.status_code
    body = e.body if isinstance(e.body, dict) else {}
    code = str(body.get("code") or body.get("type") or "")
    message = scrub(str(body.get("message") or e.message), key_var)
    headers = getattr(e.response, "headers", None)
    should_retry = headers.get("x-should-retry") if headers is not None else None
    if status in (400, 413, 422):
        _check_too_long(code, message, failed)
        if NO_TOOLS.search(message):
            raise ModelError(
                f"the model cannot call tools: {where} rejected the request's tools ({message})",
                hint="openbot's agent works through tool calls: pick a model with tool calling "
                "(e.g. qwen3-coder, llama3.1, gpt-oss), or check the server's tool-call settings",
                usage=failed,
            ) from None
    if status in (401, 403):
        hint = (
            f"check {key_var}: it must be a valid key for {where}"
            if key_var
            else f"{where} wants a key: set api_key_env"
        )
        raise ModelError(
            f"{where} refused the credentials (HTTP {status} {code}): {message}", hint=hint, usage=failed
        ) from None
    if status == 404 and "model" in message.lower():
        raise ModelError(
            f"{where} does not know the model (HTTP 404): {message}",
            hint="check the model name (for Ollama: ollama pull <model>)",
            usage=failed,
        ) from None
    if code == "insufficient_quota":  # a 429 that no wait fixes: the account is out of credit
        raise ModelError(f"{where}: the account's quota is used up ({message})", usage=failed) from None
    transient = status >= 500 or status in (408, 409, 429)
    if should_retry == "false" or not (transient or should_retry == "true"):
        why = " (the server said not to retry)" if transient else ""
        raise ModelError(
            f"{where} rejected the request (HTTP {status} {code}): {message}{why}", usage=failed
        ) from None
    wait = retry_after(headers)
    if status == 429:
        return Outage("rate limited", f"HTTP 429 {code}: {message}", wait)
    if status in (503, 529) or "overloaded" in code:
        return Outage("overloaded", f"HTTP {status} {code}: {message}", wait)
    return Outage("unavailable", f"server error HTTP {status} {code}: {message}", wait)
