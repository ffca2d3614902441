"""One session (= one iteration of a run): open → turn → close.

    open   number it in history, write system_prompt.md, open its events.jsonl, emit session_started,
           add this iteration's prompt to the conversation
    turn   one agent Turn (openbot.agent.turn) with the tools in the run's workspace
    close  on every exit: metadata.json and run.json get the session's status, usage and summary, then
           session_ended; a stop (completed, limit, interrupted) goes on to the runner

`with Session(parts, ...) as session: session.turn()` runs all three.
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Callable, Sequence
from types import TracebackType

from openbot.agent.context import estimate_tokens
from openbot.agent.editmode import EditMode
from openbot.agent.editprompt import Shown, first_message, listing, show_files
from openbot.agent.editturn import EditTurn
from openbot.agent.prompt import (
    IterationState,
    PromptParts,
    changes_note,
    instructions_snapshot,
    iteration_prompt,
    system_prompt,
)
from openbot.agent.textprompt import tools_prompt
from openbot.agent.tools.base import ToolContext
from openbot.agent.tools.registry import tool_specs
from openbot.agent.turn import Turn, TurnLimits, TurnResult
from openbot.config.skills import Skill
from openbot.errors import OpenbotError
from openbot.events import Error, EventLog, Notice, SessionEnded, SessionStarted, TeeSink, UserInput
from openbot.files import superseded, write_atomic
from openbot.run.parts import RunParts
from openbot.run.stopped_summary import STOPPED, session_summary
from openbot.state.history import SessionMeta
from openbot.stops import Completed, Completion, Status, Stop, Unverified
from openbot.views.escapes import clip


class Session:
    def __init__(self, parts: RunParts, number: int, skills: Sequence[Skill], user_input: list[str]) -> None:
        self.parts, self.number, self.skills, self.user_input = parts, number, list(skills), user_input
        self.status: Status = "failed"
        self.reason = ""
        self.completion: Completion | None = None  # session_complete's, carried by the stop that ends the run
        self.agent_turn: Turn | None = None
        self.shown, self.files = Shown(), set[str]()  # work_mode "edits": the first message's files
        self.edits = EditMode([])  # work_mode "edits": made with the first message (its check runs then)

    def __enter__(self) -> Session:
        self.open()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close(error)

    def open(self) -> None:
        p, plan, rec, ws = self.parts, self.parts.plan, self.parts.record, self.parts.workspace
        assert ws.sandbox is not None
        for tool in p.tools:  # the shell's sandbox boots while the prompt is made and the model answers
            getattr(tool, "warm", lambda *_: None)(ws.sandbox, ws.workdir, ws.env)
        self.system, self.changes = self._system(self._prompt_parts())
        no_tools = plan.config.tool_protocol == "text" or plan.work.mode == "edits"
        sent = [] if no_tools else [t.spec.to_api() for t in p.tools]
        p.context.fixed_tokens = estimate_tokens(self.system) + estimate_tokens(sent)
        memory = plan.memory.for_prompt()
        self.meta = meta = p.history.create_session(
            rec.run_id, p.model.model, rec.branch, rec.base, (plan.task or plan.instructions)[:200]
        )
        p.recorder.session_opened(meta.session_id)
        session_dir = p.history.session_dir(meta.session_id)
        write_atomic(session_dir / "system_prompt.md", p.redactor.redact(self.system))
        self.log = EventLog(p.history.events_path(meta.session_id), p.redactor.redact)
        self.sink = TeeSink(self.log, p.view, ws.net.tally)  # a setup's and a check's connections count
        ws.net.route.to(self.sink)  # the agent's connections: this session's events
        self.ctx = ToolContext(
            workdir=ws.workdir,
            session_dir=session_dir,
            env=ws.env,
            memory=plan.memory,
            history=p.history,
            sandbox=ws.sandbox,
            sink=self.sink,
            cancel=p.cancel,
            default_timeout_secs=plan.config.command_timeout_secs,
            redact=p.redactor.redact,
            deadline=p.budget.deadline(),
        )
        self.sink.emit(
            SessionStarted(
                session_id=meta.session_id,
                session_number=meta.session_number,
                run_id=rec.run_id,
                model=p.model.model,
                branch=rec.branch,
            )
        )
        if ws.sandbox.unconfined_warning:
            self.sink.emit(Notice(kind="sandbox_unconfined", message=ws.sandbox.unconfined_warning))
        for line in self.user_input:  # typed while the bot slept: in this prompt, and on the record
            self.sink.emit(UserInput(text=line))
        p.conversation.add_user_text(self._first_message(meta, memory))
        self.started = time.monotonic()

    def _first_message(self, meta: SessionMeta, memory: dict[str, str]) -> str:
        """The iteration's prompt; in work_mode "edits" the task, the files it names and the check."""
        p, plan, workdir = self.parts, self.parts.plan, self.parts.workspace.workdir
        if plan.work.mode != "edits":
            return iteration_prompt(self._state(meta, memory))
        self.files = listing(workdir)
        verify = plan.verify
        self.edits = EditMode(p.tools, verify.commands, verify.timeout_secs, files=self.files)
        self.edits.restart = self._edits_message
        return self._edits_message(self.edits.before(self.ctx))  # first: the failure picks the first file

    def _edits_message(self, said: str) -> str:
        """The files (as they are now), what openbot does and `said` (the check's failure), the task: the
        first message, and the new segment's when the conversation outgrows the window."""
        p, plan, workdir = self.parts, self.parts.plan, self.parts.workspace.workdir
        words = f"{plan.task}\n{plan.instructions}"
        self.shown = shown = show_files(words, workdir, self.files, p.context.window, self.edits.failing_in())
        self.edits.show(shown.in_chat, shown.new)
        short = len(plan.instructions) <= 2000  # said last again, where a small model looks
        task = plan.task.strip() or (plan.instructions if short else "Carry out your instructions (above).")
        self.edits.task = task
        return first_message(task, shown, plan.verify.commands, said)

    def _prompt_parts(self) -> PromptParts:
        """What the system prompt is built from; with tool_protocol "text", the tools described in it."""
        p, plan, ws = self.parts, self.parts.plan, self.parts.workspace
        text = tools_prompt(tool_specs(p.tools)) if plan.config.tool_protocol == "text" else ""
        names = tuple(t.spec.name for t in p.tools)
        parts = PromptParts(plan.instructions, self.skills, ws.workdir, ws.skills_dir, text, names)
        parts.mode = plan.work.mode
        return parts

    def _system(self, parts: PromptParts) -> tuple[str, str]:
        """The run's system prompt, built once and kept for the whole run (resumes included: thinking
        blocks are bound to it), and a note of the instructions that changed since it was built."""
        conversation = self.parts.conversation
        now = instructions_snapshot(parts)
        if conversation.fixed is None:
            conversation.set_fixed(system_prompt(parts), now)
        assert conversation.fixed is not None
        return conversation.fixed["system"], changes_note(conversation.fixed["snapshot"], now)

    def _state(self, meta: SessionMeta, memory: dict[str, str]) -> IterationState:
        p, rec, ws = self.parts, self.parts.record, self.parts.workspace
        return IterationState(
            project=rec.project,
            session_number=meta.session_number,
            branch=rec.branch,
            base=rec.base,
            workdir=ws.workdir,
            isolated=ws.isolated,
            memory=memory,
            recent=[m for m in p.history.recent(6) if m.session_id != meta.session_id][:5],
            user_input=self.user_input,
            task=p.plan.task,
            iteration=self.number,
            max_iterations=p.plan.config.max_iterations,
            changes=self.changes,
            verify=p.plan.verify.commands,
        )

    def turn(self) -> TurnResult:
        p, config = self.parts, self.parts.plan.config
        self.agent_turn = turn = self._turn_type()(
            model=p.model,
            system=self.system,
            tools=p.tools,
            conversation=p.conversation,
            ctx=self.ctx,
            limits=TurnLimits(config.max_turn_steps, config.max_repeats, config.max_output_tokens),
            budget=p.budget,
            context=p.context,
            keep_from=len(p.conversation.messages) - 1,
            take_input=p.take_input,
            redact=p.redactor.redact,
            protocol=config.tool_protocol,
        )
        result = self._run_verified(turn)
        self.status, self.reason = result.ended.status, result.ended.reason
        return result

    def _turn_type(self) -> Callable[..., Turn]:
        """Turn, or in work_mode "edits" the same loop acting on the edits in each reply."""
        plan = self.parts.plan
        if plan.work.mode != "edits":
            return Turn
        return functools.partial(EditTurn, edits=self.edits)

    def _run_verified(self, turn: Turn) -> TurnResult:
        """The turn; a session_complete that openbot's check refuses is answered in a next turn."""
        while True:
            try:
                return turn.run()
            except Completed as done:
                told = self._verify(done)  # what failed says what to change; the question: work it passed
                if told is None and self.parts.unchanged:
                    told = self.parts.unchanged.question(done.completion, self.sink)
                if told is None:
                    raise
                self.parts.conversation.add_user_text(told)

    def _verify(self, done: Completed) -> str | None:
        """openbot's check of the work (run/verify.py); the session's metadata keeps its last result."""
        verifier = self.parts.verifier
        if verifier is None:
            return None
        before = verifier.attempt
        try:
            return verifier.check(done.completion, self.ctx)
        finally:
            if verifier.attempt != before:
                self.meta.extra["verification"] = dict(self.parts.record.verification)
            if self.parts.record.feedback:  # --feedback: which items the bot addressed (run/feedback.py)
                self.meta.extra["feedback"] = dict(self.parts.record.feedback)

    def close(self, error: BaseException | None) -> None:
        if error is not None:  # every stop, error or completion leaving a session ends the run
            self.parts.ending()
        self.parts.workspace.net.route.to(self.parts.workspace.net.run_log)  # its repeats written here
        if isinstance(error, Completed | Unverified):
            self.completion = error.completion
        if isinstance(error, Stop):
            self.status, self.reason = error.status, error.message
        elif isinstance(error, OpenbotError):
            self.status, self.reason = "failed", error.one_line()
            self.sink.emit(Error(message=self.reason, kind=type(error).__name__))
        elif error is not None:
            self.status, self.reason = "failed", f"{type(error).__name__}: {error}"
        try:  # a run's last session: its records are written again, durably, by the run's end
            with superseded() if error is not None else contextlib.nullcontext():
                self._record(time.monotonic() - self.started)
        finally:
            self.sink.emit(SessionEnded(status=self.status, reason=self.reason))
            self.log.close()

    def _record(self, duration: float) -> None:
        p, meta, ctx = self.parts, self.meta, self.ctx
        turn = self.agent_turn
        usage, last_text = (turn.result.usage, turn.result.last_text) if turn else (None, "")
        meta.status, meta.error = self.status, self.reason
        meta.duration_secs = round(duration, 3)
        if usage is not None:
            meta.tokens = usage.as_dict()
            meta.cost_usd = round(usage.cost_usd, 6)
        meta.command_count = ctx.command_count
        summary = self.completion.summary if self.completion else last_text
        if self.completion is None and self.status in STOPPED:  # not its last words: what happened
            summary = session_summary(self.status, self.reason, p.history.events(meta.session_id))
        meta.response_summary = clip(p.redactor.redact(summary.strip()), 500)
        meta.action = self.completion.action if self.completion else ""
        if self.status == "completed" and self.completion is not None and p.record.nothing_changed:
            meta.extra["nothing_changed"] = True
        meta.extra["budget"] = p.budget.status()
        sandbox = p.workspace.sandbox
        assert sandbox is not None
        meta.extra["sandbox"] = {
            "requested": p.plan.config.sandbox,
            "enforced": sandbox.mode,
            "warning": sandbox.unconfined_warning,
        }
        p.history.save(meta)
        p.recorder.session_closed(meta.response_summary, ctx.command_count)
        p.save_totals()
