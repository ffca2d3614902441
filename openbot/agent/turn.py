"""One agent turn: ask the model, run the tools it asked for, feed the results back — until it stops.

Turn.run ── loop: step() = check limits (+ compaction) → query the model → judge the reply → execute its
            tool calls. What each stop reason leads to is openbot.agent.replies; compaction is append-only
            (openbot.agent.context). Each stop is an exception (openbot.stops): EndTurn │ StepLimit │
            Stuck end the turn here; Completed │ LimitReached │ Interrupted │ Refused end the run and
            propagate to the runner
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field

from openbot.agent.budget import Budget, token_count
from openbot.agent.context import ContextKeeper, compact
from openbot.agent.models.base import ModelBackend, ModelReply, ModelRequest, PromptTooLong, Usage
from openbot.agent.repeats import Repeats
from openbot.agent.replies import MAX_REASKS, Verdict, judge, refusal_text, said
from openbot.agent.textreply import read_reply, results_text
from openbot.agent.tools.base import Tool, ToolContext
from openbot.agent.tools.registry import run_tool, tool_specs
from openbot.errors import ModelError
from openbot.events import (
    Message,
    Notice,
    ToolCall,
    TurnAborted,
    TurnCompleted,
    TurnStarted,
    UserInput,
)
from openbot.state.conversation import Conversation, not_run
from openbot.state.messages import ToolResultBlock, ToolUseBlock
from openbot.stops import AbortTurn, Completed, Completion, EndTurn, Refused, StepLimit, Stuck, TurnEnded


@dataclass(frozen=True)
class TurnLimits:
    max_steps: int = 100
    max_repeats: int = 5
    max_tokens_per_call: int = 8192


@dataclass
class TurnResult:
    """What a turn did; `ended` is the stop that ended it (its status and detail are the session's)."""

    steps: int
    usage: Usage
    last_text: str = ""
    texts: list[str] = field(default_factory=list)
    ended: TurnEnded = field(default_factory=EndTurn)


NUDGE = (
    "[openbot] You have used {used} of {limit} model calls allowed in this turn. Wrap up now: commit your "
    "work, save what you learned (memory, where you have it), and call session_complete (or end your turn)."
)


TOO_LONG_RETRIES = 3  # compactions after "prompt is too long" before the error stands


@dataclass
class Turn:
    """Everything one turn needs; `run()` is the loop, `step()` one model call, the rest its parts."""

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
    protocol: str = "auto"  # tool_protocol: native | text (no tools sent; calls read from text) | auto
    nudge: bool = True  # the wrap-up note at 80 % of max_turn_steps (not in work_mode "edits")

    def __post_init__(self) -> None:
        # Kept on the turn so the runner can record partial usage when the turn ends by an exception.
        self.result = TurnResult(steps=0, usage=Usage())
        self._repeats = Repeats(self.limits.max_repeats)  # openbot.agent.repeats
        self._reasks = 0  # consecutive replies that could not be used (openbot.agent.replies)
        self._acted = False  # a tool ran in this turn: a reply without a call may now end it
        self._text_uses: list[ToolUseBlock] = []  # the calls the last reply wrote as text

    def run(self) -> TurnResult:
        self.ctx.sink.emit(TurnStarted(model=self.model.model))
        try:
            while True:
                self.step()
        except TurnEnded as end:
            return self._ended(end)
        except Completed:
            self.ctx.sink.emit(TurnCompleted(steps=self.result.steps, stop_reason="session_complete"))
            raise

    def step(self) -> None:
        self._check_limits()
        reply = self._query()
        if reply is not None:
            self._execute(reply)

    def _check_limits(self) -> None:
        """Before every call: cancelled? over budget? Then typed input, the nudge at 80 %, compaction."""
        if self.ctx.cancel.is_set():
            raise self.ctx.cancel.interrupted()
        self.budget.check()
        steps, max_steps = self.result.steps, self.limits.max_steps
        for line in self.take_input():
            self._repeats.forget()
            self.ctx.sink.emit(UserInput(text=line))
            self.conversation.add_user_text(f"[message from the user, typed while you work]\n{line}")
        if self.nudge and steps and steps == int(max_steps * 0.8):
            self.conversation.add_user_text(NUDGE.format(used=steps, limit=max_steps))
        if self._outgrown():
            self._compact()

    def _outgrown(self) -> bool:
        """Past the compaction mark: by the estimate, then by the API's own count where it can give one
        (an estimate of dense or non-ASCII text can be far off, and a compaction costs a summary)."""
        messages = self.conversation.messages
        if not self.context.needs_compaction(messages):
            return False
        count = getattr(self.model, "count_tokens", None)
        counted = count(self._request()) if count is not None else None
        if counted is None:
            return True
        self.context.observe(counted, len(messages))
        return self.context.needs_compaction(messages)

    def _request(self) -> ModelRequest:
        return ModelRequest(
            system=self.system,
            tools=[] if self.protocol == "text" else tool_specs(self.tools),
            messages=self.conversation.messages,
            max_tokens=self.limits.max_tokens_per_call,
            deadline=self.budget.deadline(),
        )

    def _compact(self) -> None:
        """Start a new segment from the model's summary; nothing sent before is changed (context.py)."""
        first, usage = compact(self.model, self._request(), self.context, self.keep_from, self.ctx.sink)
        self._account(usage)
        self.conversation.start_segment(first)
        self.keep_from = 0

    def _call(self) -> ModelReply:
        """One model call; a "prompt is too long" answer compacts the conversation and retries."""
        for attempt in range(1, TOO_LONG_RETRIES + 1):
            request = self._request()
            try:
                return self.model.complete(request, self.ctx.sink)
            except PromptTooLong as e:
                if isinstance(e.usage, Usage):
                    self._account(e.usage)
                if attempt == TOO_LONG_RETRIES or len(request.messages) <= 1:
                    raise
                self.context.learn_window(e.maximum)
                message = (
                    f"the API said the prompt is too long ({e.tokens:,} > {e.maximum:,} tokens); compacting"
                )
                data = {"tokens": e.tokens, "maximum": e.maximum}
                self.ctx.sink.emit(Notice(kind="prompt_too_long", message=message, data=data))
                self._compact()
            except ModelError as e:
                if isinstance(e.usage, Usage):  # failed attempts that were billed still count
                    self._account(e.usage)
                raise
        raise AssertionError("unreachable")

    def _query(self) -> ModelReply | None:
        """The reply whose tool calls may run, or None when it was dropped or is to be continued."""
        reply = self._call()
        sent = len(self.conversation.messages)
        self.result.steps += 1
        self._account(reply.usage)
        self.context.observe(reply.usage.context_size, sent)
        self.context.note_server_compaction(reply, self.ctx.sink)
        text = read_reply(reply, self.protocol, self.model.model, self.conversation.messages, self.tools,
                          self.result.steps, self.ctx.sink)  # fmt: skip
        self._text_uses, reply.defect = text.uses, reply.defect or text.defect
        acted = self._acted or bool(self._text_uses)
        verdict = self._judge(reply, judge(reply, acted=acted, text_calls=text.taught, not_run=text.not_run))
        if verdict.keep and reply.content:  # an empty assistant message would make later requests invalid
            self.conversation.append({"role": "assistant", "content": reply.content})
        if verdict.keep and reply.text:
            self.ctx.sink.emit(Message(text=reply.text))
            if not self._text_uses:  # a call written as text is no summary of the session's work
                self.result.last_text = reply.text
            self.result.texts.append(reply.text)
        if verdict.event:
            data = {
                "stop_reason": reply.stop_reason,
                "stop_details": reply.stop_details,
                "defect": reply.defect,
            }
            self.ctx.sink.emit(Notice(kind=verdict.event, message=said(verdict, reply), data=data))
        if verdict.action == "refused":
            raise Refused(refusal_text(reply), reply.stop_details or {})
        if verdict.action == "run":
            self._reasks = 0
            return reply
        if verdict.action == "reask":
            self._reasks += 1
            if self._reasks > MAX_REASKS:
                why = "called no tool" if verdict.event == "no_tool_call" else "could not be used"
                raise Stuck(f"{self._reasks} replies in a row {why} ({verdict.event}); nothing in them ran")
            self.conversation.add_user_text(verdict.note)
        return None

    def _judge(self, reply: ModelReply, verdict: Verdict) -> Verdict:
        return verdict  # EditTurn acts on a reply cut at its length limit: what closed in it is applied

    def _execute(self, reply: ModelReply) -> None:
        tool_uses = reply.tool_uses or self._text_uses
        if not tool_uses:
            raise EndTurn(reply.stop_reason)
        self._acted = True
        as_text = not reply.tool_uses
        if self._repeats.see(tool_uses):  # the same calls again, nothing run since: not run again
            self._give(tool_uses, self._repeats.answers(tool_uses, self.ctx.sink), as_text)
        else:
            completion = self._run_tools(tool_uses, as_text=as_text)
            if completion is not None:  # one written as text merges only verified work (run/verify.py)
                raise Completed(dataclasses.replace(completion, as_text=as_text))
        if self.ctx.cancel.is_set():
            raise self.ctx.cancel.interrupted()
        if stuck := self._repeats.stuck(tool_uses):
            raise Stuck(stuck)
        if self.result.steps >= self.limits.max_steps:
            raise StepLimit(f"reached max_turn_steps ({self.limits.max_steps})")

    def _account(self, usage: Usage) -> None:
        self.budget.add(usage)  # first: it refuses usage no call can have (agent/budget.py)
        self.result.usage.add(usage)
        self.ctx.sink.emit(token_count(self.model.model, usage))

    def _run_tools(self, tool_uses: list[ToolUseBlock], as_text: bool = False) -> Completion | None:
        """Run the calls in order, until one completes the session (returned) or the run is cancelled:
        the rest get a "not run" result. Every tool_use gets its tool_result, whatever happens, so the
        saved conversation stays valid for resume."""
        results: list[ToolResultBlock] = []
        completion: Completion | None = None
        try:
            for tool_use in tool_uses:
                if self.ctx.cancel.is_set() or completion is not None:
                    break
                result, completion = self._run_tool(tool_use)
                results.append(result)
        finally:
            done = {r["tool_use_id"] for r in results}
            why = "session_complete was called" if completion is not None else "the run was stopped"
            results += [not_run(t["id"], why) for t in tool_uses if t["id"] not in done]
            self._repeats.remember(results)
            self._give(tool_uses, results, as_text)
        return completion

    def _give(self, tool_uses: list[ToolUseBlock], results: list[ToolResultBlock], as_text: bool) -> None:
        if as_text:
            self.conversation.add_user_text(results_text(tool_uses, results))
        else:
            self.conversation.append({"role": "user", "content": [*results]})

    def _run_tool(self, tool_use: ToolUseBlock) -> tuple[ToolResultBlock, Completion | None]:
        self.ctx.sink.emit(ToolCall(id=tool_use["id"], name=tool_use["name"], input=tool_use["input"]))
        out = run_tool(self.tools, tool_use["name"], tool_use["input"], self.ctx, tool_use["id"])
        block: ToolResultBlock = {
            "type": "tool_result",
            "tool_use_id": tool_use["id"],
            "content": self.redact(out.content) or "(no output)",
        }
        if out.is_error:
            block["is_error"] = True
        return block, out.completion

    def _ended(self, end: TurnEnded) -> TurnResult:
        self.result.ended = end
        if isinstance(end, AbortTurn):
            self.ctx.sink.emit(TurnAborted(reason=end.outcome, detail=end.detail))
        else:
            self.ctx.sink.emit(TurnCompleted(steps=self.result.steps, stop_reason=end.detail or ""))
        return self.result
