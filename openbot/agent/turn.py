"""One agent turn: ask the model, run the tools it asked for, feed the results back — until it stops.

run_turn ─┬─ before every call: cancelled? step limit? budget? context too big? user input?
          ├─ model.complete(request, sink)           (text streams to the sink as it arrives)
          ├─ run each tool_use in order → tool_result blocks (errors become is_error results)
          └─ stop: no tool calls │ session_complete │ step limit │ stuck (repeats) │ interrupted
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from openbot.agent.budget import Budget
from openbot.agent.context import ContextKeeper
from openbot.agent.models.base import ModelBackend, ModelRequest, Usage
from openbot.agent.tools.base import Tool, ToolContext
from openbot.agent.tools.registry import run_tool, tool_specs
from openbot.errors import ModelError
from openbot.events import (
    Message,
    Notice,
    TokenCount,
    ToolCall,
    TurnAborted,
    TurnCompleted,
    TurnStarted,
    UserInput,
)
from openbot.state.conversation import Conversation, not_run
from openbot.stops import Interrupted


@dataclass(frozen=True)
class TurnLimits:
    max_steps: int = 100
    max_repeats: int = 5
    max_tokens_per_call: int = 8192


@dataclass
class TurnResult:
    outcome: str  # end_turn | session_complete | step_limit | stuck
    steps: int
    usage: Usage
    last_text: str = ""
    detail: str = ""
    texts: list[str] = field(default_factory=list)


NUDGE = (
    "[openbot] You have used {used} of {limit} model calls allowed in this turn. Wrap up now: commit your "
    "work, save what you learned to memory, and call session_complete (or end your turn)."
)


def _signature(tool_uses: list[dict[str, Any]]) -> str:
    return json.dumps([[t["name"], t["input"]] for t in tool_uses], sort_keys=True)


@dataclass
class Turn:
    """Everything one turn needs; `run()` is the loop, the named methods are its steps."""

    model: ModelBackend
    system: str
    tools: list[Tool]
    conversation: Conversation
    ctx: ToolContext
    limits: TurnLimits
    budget: Budget
    context: ContextKeeper
    keep_from: int = 0  # index of this iteration's prompt message (never compacted)
    take_input: Callable[[], list[str]] = list
    redact: Callable[[str], str] = lambda s: s

    def __post_init__(self) -> None:
        # Kept on the turn so the runner can record partial usage when the turn ends by an exception.
        self.result = TurnResult(outcome="end_turn", steps=0, usage=Usage())

    def run(self) -> TurnResult:
        sink = self.ctx.sink
        sink.emit(TurnStarted(model=self.model.model))
        result = self.result
        last_sig, repeats = "", 0
        while True:
            self._before_call(result.steps)
            request = self._request()
            sent = len(request.messages)  # the list grows as the conversation does
            try:
                reply = self.model.complete(request, sink)
            except ModelError as e:
                if e.usage is not None:  # failed attempts that were billed still count
                    self._account(e.usage, result)
                raise
            result.steps += 1
            self._account(reply.usage, result)
            u = reply.usage
            self.context.observe(u.input_tokens + u.cache_read_tokens + u.cache_write_tokens, sent)
            if reply.content:  # an empty assistant message would make every later request invalid
                self.conversation.append({"role": "assistant", "content": reply.content})
            if reply.text:
                sink.emit(Message(text=reply.text))
                result.last_text = reply.text
                result.texts.append(reply.text)
            if not reply.tool_uses:
                return self._end(result, "end_turn", reply.stop_reason)
            self._run_tools(reply.tool_uses)
            if self.ctx.completion is not None:
                return self._end(result, "session_complete", "session_complete")
            if self.ctx.cancel.is_set():
                raise Interrupted(self.ctx.cancel_signal)
            sig = _signature(reply.tool_uses)
            repeats = repeats + 1 if sig == last_sig else 1
            last_sig = sig
            if repeats >= self.limits.max_repeats:
                return self._abort(result, "stuck", f"the same tool call was repeated {repeats} times")
            if result.steps >= self.limits.max_steps:
                return self._abort(result, "step_limit", f"reached max_turn_steps ({self.limits.max_steps})")

    def _before_call(self, steps: int) -> None:
        if self.ctx.cancel.is_set():
            raise Interrupted(self.ctx.cancel_signal)
        self.budget.check()
        for line in self.take_input():
            self.ctx.sink.emit(UserInput(text=line))
            self.conversation.add_user_text(f"[message from the user, typed while you work]\n{line}")
        if steps and steps == int(self.limits.max_steps * 0.8):
            self.conversation.add_user_text(NUDGE.format(used=steps, limit=self.limits.max_steps))
        saved = self.context.maybe_compact(self.conversation.messages, self.keep_from)
        if saved:
            self.ctx.sink.emit(
                Notice(kind="context_compacted", message=f"elided old tool outputs (~{saved:,} tokens)")
            )

    def _request(self) -> ModelRequest:
        return ModelRequest(
            system=self.system,
            tools=tool_specs(self.tools),
            messages=self.conversation.messages,
            max_tokens=self.limits.max_tokens_per_call,
        )

    def _account(self, usage: Usage, result: TurnResult) -> None:
        result.usage.add(usage)
        self.budget.add(usage)
        self.ctx.sink.emit(
            TokenCount(
                model=self.model.model,
                input=usage.input_tokens,
                output=usage.output_tokens,
                cache_read=usage.cache_read_tokens,
                cache_write=usage.cache_write_tokens,
                cost_usd=round(usage.cost_usd, 6),
            )
        )

    def _run_tools(self, tool_uses: list[dict[str, Any]]) -> None:
        """Run the calls in order; once cancelled, the rest get a "not run" result. Every tool_use gets
        its tool_result, whatever happens, so the saved conversation stays valid for resume."""
        results: list[dict[str, Any]] = []
        try:
            for tool_use in tool_uses:
                if self.ctx.cancel.is_set() or self.ctx.completion is not None:
                    break
                results.append(self._run_tool(tool_use))
        finally:
            done = {r["tool_use_id"] for r in results}
            why = "session_complete was called" if self.ctx.completion is not None else "the run was stopped"
            results += [not_run(t["id"], why) for t in tool_uses if t["id"] not in done]
            self.conversation.append({"role": "user", "content": results})

    def _run_tool(self, tool_use: dict[str, Any]) -> dict[str, Any]:
        self.ctx.sink.emit(ToolCall(id=tool_use["id"], name=tool_use["name"], input=tool_use["input"]))
        out = run_tool(self.tools, tool_use["name"], tool_use["input"], self.ctx, tool_use["id"])
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": tool_use["id"],
            "content": self.redact(out.content) or "(no output)",
        }
        if out.is_error:
            block["is_error"] = True
        return block

    def _end(self, result: TurnResult, outcome: str, stop_reason: str) -> TurnResult:
        result.outcome = outcome
        self.ctx.sink.emit(TurnCompleted(steps=result.steps, stop_reason=stop_reason or ""))
        return result

    def _abort(self, result: TurnResult, outcome: str, detail: str) -> TurnResult:
        result.outcome, result.detail = outcome, detail
        self.ctx.sink.emit(TurnAborted(reason=outcome, detail=detail))
        return result
