"""Keeping a long run's conversation inside the model's context window without editing its history.

The size that decides is the API's: the prompt tokens it counted for the last request (input + cache
read + cache write) plus an estimate of what was appended since, against the model's real window
(`max_input_tokens` from the Models API, or learnt from a "prompt is too long" 400).

Where the model supports it, the API compacts the conversation itself (server-side compaction, see
`agent.models.params`): a reply then begins with a `compaction` block that is stored like any other and
the API ignores what came before it; openbot's own compaction stays as the fallback, at a higher mark.

Compaction is append-only. Thinking blocks are valid only while everything before them is byte-identical,
so nothing sent is ever changed: when the conversation passes TRIGGER of the window (or the API says it
is too long), the model is asked — in a separate request with the run's fixed system prompt and tools —
to summarise a transcript of the current segment, and a new segment starts with one user message: the
iteration's prompt, the summary, and the latest tool results. The old segment stays in the run's
conversation file, unchanged (`Conversation.start_segment`). A scripted model, or a summary that
comes back unusable (refused, empty), gets a mechanical summary: the transcript's newest part.
"""

from __future__ import annotations

import json

from openbot.agent.models.base import ModelBackend, ModelReply, ModelRequest, PromptTooLong, Usage
from openbot.events import EventSink, Notice
from openbot.state.messages import Block, Message, TextBlock, ToolResultBlock, blocks_of, text_block

CONTEXT_WINDOW = 200_000  # tokens, until the Models API (or a 400) says otherwise
TRIGGER = 0.8
FALLBACK_TRIGGER = 0.9  # when the API compacts by itself (at 0.75 of the window), openbot's is the fallback
CHARS_PER_TOKEN = 3  # conservative, for sizing the transcript sent to be summarised
TRANSCRIPT_SHARE = 0.4  # of the window, for that transcript
RESULT_CHARS = 4_000  # of one tool result in the transcript
CARRY_CHARS = 20_000  # of the latest tool results carried into the new segment, at most
CARRY_SHARE = 0.1  # of the window, for those results
MECHANICAL_CHARS = 12_000
SUMMARY_ASK = (
    "[openbot] This conversation is about to outgrow the model's context window, so it will be replaced "
    "by your summary. Above is a transcript of it. Write that summary for yourself to continue from: the "
    "task, what you did and found (files, commands, results, errors), decisions made, the current state "
    "of the work, and the next steps. Be specific and complete; do not call tools."
)


def estimate_tokens(obj: object) -> int:
    """A cheap, conservative estimate: ~4 characters per token, a non-ASCII character as its \\u escape
    (tokenizers spend more than one token on most of them)."""
    text = json.dumps(obj)
    return len(text) // 4 + 1


def _text(content: str | list[Block] | list[TextBlock]) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(b["text"] for b in content if b["type"] == "text")


def _result_text(block: ToolResultBlock, limit: int) -> str:
    content = block["content"]
    text = content if isinstance(content, str) else _text(content) or json.dumps(content, ensure_ascii=False)
    cut = f"\n[... {len(text) - limit:,} more characters]" if len(text) > limit else ""
    return text[:limit] + cut


def render(message: Message) -> str:
    """One message as transcript text (thinking left out: it is the model's, not the work's)."""
    lines = [f"## {message['role']}"]
    for b in blocks_of(message):
        if b["type"] == "text" and b["text"]:
            lines.append(b["text"])
        elif b["type"] == "tool_use":
            lines.append(f"-> {b['name']} {json.dumps(b['input'], ensure_ascii=False)[:2000]}")
        elif b["type"] == "tool_result":
            flag = " (error)" if b.get("is_error") else ""
            lines.append(f"<- result{flag}:\n{_result_text(b, RESULT_CHARS)}")
    return "\n".join(lines)


def transcript(messages: list[Message], max_chars: int) -> str:
    """The newest messages that fit in `max_chars`, oldest first, with a note when older ones were cut."""
    parts: list[str] = []
    used = 0
    for msg in reversed(messages):
        part = render(msg)
        if parts and used + len(part) > max_chars:
            parts.append(f"[... {len(messages) - len(parts)} earlier messages not shown]")
            break
        parts.append(part[-max_chars:])
        used += len(part)
    return "\n\n".join(reversed(parts))


class ContextKeeper:
    """Tracks the conversation's size as the API counts it and decides when to start a new segment."""

    def __init__(
        self, window: int = CONTEXT_WINDOW, fixed_tokens: int = 0, server_compaction: bool = False
    ) -> None:
        self.window = window
        self.trigger = FALLBACK_TRIGGER if server_compaction else TRIGGER
        self.fixed_tokens = fixed_tokens  # system prompt + tool definitions, until the API has counted
        self.compactions = 0
        self.largest_prompt = 0
        self._sizes: list[int] = []
        self._total = 0  # sum(self._sizes)
        self._counted: tuple[int, int] | None = None  # (prompt tokens the API counted, messages sent)

    def observe(self, prompt_tokens: int, messages_sent: int) -> None:
        """Record the API's own count of the last request (input + cache read + cache write)."""
        if prompt_tokens > 0:
            self._counted = (prompt_tokens, messages_sent)
            self.largest_prompt = max(self.largest_prompt, prompt_tokens)

    def note_server_compaction(self, reply: ModelReply, sink: EventSink) -> None:
        """Tell the run when the API compacted the conversation while making `reply`."""
        summary = next((b for b in reply.content if b["type"] == "compaction"), None)
        if summary is None:
            return
        self.compactions += 1
        usage = reply.usage
        text = summary["content"] or ""
        how = "summarised" if text else "failed to summarise (the API treats that block as a no-op)"
        sink.emit(
            Notice(
                kind="context_compacted",
                message=f"the API {how} the conversation (server-side compaction); "
                f"the reply was made from ~{usage.context_size:,} tokens",
                data={
                    "server": True,
                    "tokens_after": usage.context_size,
                    "billed_input": usage.prompt_tokens,
                    "summary_chars": len(text),
                    "compactions": self.compactions,
                },
            )
        )

    def learn_window(self, maximum: int) -> None:
        """The API said the window is `maximum` tokens (a "prompt is too long" 400)."""
        if maximum > 0:
            self.window = min(self.window, maximum) if self.window else maximum

    def measure(self, messages: list[Message]) -> int:
        # Only the newest message can change in place (user text joins it); earlier sizes are cached, and
        # so is their sum: a call's work does not grow with the conversation.
        if self._sizes:
            self._total -= self._sizes.pop()
        for message in messages[len(self._sizes) :]:
            self._sizes.append(estimate_tokens(message))
            self._total += self._sizes[-1]
        if self._counted is not None and self._counted[1] <= len(messages):
            # The size that decides is the API's: what it counted, plus an estimate of what came since.
            counted, sent = self._counted
            return counted + sum(self._sizes[sent:])
        return self.fixed_tokens + self._total

    def needs_compaction(self, messages: list[Message]) -> bool:
        return len(messages) > 1 and self.measure(messages) > self.window * self.trigger

    def reset(self) -> None:
        """A new segment began: nothing the API counted describes it any more."""
        self._sizes, self._total, self._counted = [], 0, None


def compact(
    model: ModelBackend,
    base: ModelRequest,
    keeper: ContextKeeper,
    keep_from: int,
    sink: EventSink,
) -> tuple[Message, Usage]:
    """Summarise `base.messages` and return (the first message of the new segment, the usage spent)."""
    messages = base.messages
    spent = Usage()
    summary = ""
    max_chars = int(keeper.window * TRANSCRIPT_SHARE * CHARS_PER_TOKEN)
    if not model.model.startswith("scripted:"):
        for _ in range(3):
            ask: list[Block] = [text_block(f"{transcript(messages, max_chars)}\n\n{SUMMARY_ASK}")]
            request = ModelRequest(
                base.system, base.tools, [{"role": "user", "content": ask}], base.max_tokens, base.deadline
            )
            try:
                reply = model.complete(request, sink)
            except PromptTooLong as e:
                keeper.learn_window(e.maximum)
                if isinstance(e.usage, Usage):
                    spent.add(e.usage)
                max_chars //= 2
                continue
            spent.add(reply.usage)
            if reply.stop_reason != "refusal" and not reply.defect:
                summary = reply.text.strip()
            break
    how = "the model's summary" if summary else "a mechanical summary (the newest part of the transcript)"
    if not summary:
        summary = transcript(messages, MECHANICAL_CHARS)
    carry = min(CARRY_CHARS, int(keeper.window * CARRY_SHARE * CHARS_PER_TOKEN))
    first = _first_message(messages, keep_from, summary, carry)
    keeper.compactions += 1
    before = keeper.measure(messages)
    sink.emit(
        Notice(
            kind="context_compacted",
            message=f"the conversation (~{before:,} tokens) was summarised into a new segment ({how})",
            data={"tokens_before": before, "summary_chars": len(summary), "compactions": keeper.compactions},
        )
    )
    keeper.reset()
    return first, spent


def _first_message(messages: list[Message], keep_from: int, summary: str, carry: int) -> Message:
    """The new segment's only message: the iteration's prompt, the summary, the latest tool results."""
    prompt = _text(messages[keep_from]["content"]) if 0 <= keep_from < len(messages) else ""
    blocks: list[Block] = [text_block(prompt)] if prompt.strip() else []
    blocks.append(
        text_block(
            "[openbot] The conversation of this run so far was compacted to stay inside the context "
            f"window. Your summary of it:\n\n{summary}"
        )
    )
    last = messages[-1] if messages else None
    results = [b for b in blocks_of(last) if b["type"] == "tool_result"] if last is not None else []
    if last is not None and last["role"] == "user" and results:
        share = max(200, carry // len(results))
        carried = "\n\n".join(f"<- result:\n{_result_text(b, share)}" for b in results)
        blocks.append(text_block(f"[openbot] The results of your latest tool calls:\n\n{carried}"))
    return {"role": "user", "content": blocks}
