"""The run loop: start, iterate sessions, and finish on every exit path without losing work."""

from __future__ import annotations

import os
import threading
import time
from itertools import count
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openbot import paths
from openbot.agent.budget import Budget
from openbot.agent.context import ContextKeeper, estimate_tokens
from openbot.agent.models.base import load_backend
from openbot.agent.prompt import IterationState, PromptParts, iteration_prompt, system_prompt
from openbot.agent.tools.base import ToolContext
from openbot.agent.tools.registry import default_tools
from openbot.agent.turn import Turn, TurnLimits
from openbot.config.integrations import secret_values
from openbot.config.skills import load_skills_checked
from openbot.errors import ConfigError, OpenbotError
from openbot.events import Error, EventLog, Notice, SessionEnded, SessionStarted, TeeSink
from openbot.files import write_atomic
from openbot.redact import Redactor
from openbot.run.mcp_servers import start_mcp
from openbot.run.plan import (
    EXIT_FAILED,
    EXIT_OK,
    GuardedModel,
    RunPlan,
    RunResult,
    new_record,
    stop_for_iterations,
)
from openbot.run.workspace import Workspace
from openbot.state.conversation import Conversation
from openbot.state.history import History, SessionMeta
from openbot.state.memory import MemoryStore
from openbot.stops import Interrupted, Stop

if TYPE_CHECKING:
    from openbot.agent.tools.mcp import McpHub


class Runner:
    def __init__(self, plan: RunPlan, view: Any, inbox: Any, guard: Any, cancel: threading.Event) -> None:
        self.plan, self.view, self.inbox, self.guard, self.cancel = plan, view, inbox, guard, cancel
        self.config = plan.config
        self.record = new_record(plan)
        self.redactor = Redactor.from_env(os.environ, also=secret_values(self.config, os.environ))
        self.history = History(paths.history_dir(plan.bot.name, self.record.project))
        self.memory = MemoryStore(paths.memory_file(plan.bot.name, self.record.project))
        # Budgets apply to each invocation; the run record's totals add up across resumes.
        self.budget = Budget(self.config.max_cost_usd, self.config.max_tokens, self.config.max_minutes)
        self.base_tokens, self.base_cost = dict(self.record.tokens), self.record.cost_usd
        self.model = GuardedModel(load_backend(plan.model), guard)
        self.tools = default_tools(self.config.command_timeout_secs)
        self.conversation = Conversation(self.record.conversation_path, self.redactor.redact)
        self.context = ContextKeeper()
        self.workspace = Workspace(plan, self.record, view)
        self.completion: dict[str, str] | None = None
        self.last_meta: SessionMeta | None = None
        self.pending_input: list[str] = []
        self.skills: list[Any] | None = None
        self.skill_problems: set[str] = set()
        self.mcp: McpHub | None = None

    # ── the loop ──────────────────────────────────────────────────────────────────────────────────
    def execute(self) -> RunResult:
        try:
            self._start()
            for i in count(1):  # max_iterations = 0 means no limit
                self._iteration(i)
                if self.completion is not None:
                    self._set_status("completed", EXIT_OK)
                    break
                stop_for_iterations(i, self.config)
                self._sleep()
        except Stop as s:
            if isinstance(s, Interrupted) and self.guard.signum:
                s = Interrupted(self.guard.signum)
            self._set_status(s.status, s.exit_code, s.message)
        except OpenbotError as e:
            self._set_status("failed", e.exit_code if e.exit_code != 0 else EXIT_FAILED, e.one_line())
        except Exception as e:  # an openbot bug: still finish cleanly and keep the work
            self._set_status("failed", EXIT_FAILED, f"internal error: {type(e).__name__}: {e}")
            if os.environ.get("OPENBOT_DEBUG"):
                raise
        finally:
            self._finish()
        return RunResult(self.record, self.resume_command, self.budget.status())

    def _sleep(self) -> None:
        secs = self.config.sleep_secs
        if self.budget.max_minutes:  # never sleep past the wall-time budget
            secs = max(0.0, min(secs, self.budget.max_minutes * 60 - self.budget.minutes() * 60))
        if secs:
            self.view.line(
                f"  sleeping {secs:.0f}s" + (" (type a line to wake the bot)" if self.inbox.enabled else "")
            )
        self.pending_input = self.inbox.wait(secs, self.cancel)
        if self.cancel.is_set():
            raise Interrupted(self.guard.signum or 2)
        self.budget.check()  # a limit reached while sleeping stops the run before a new session starts

    # ── start and finish ──────────────────────────────────────────────────────────────────────────
    def _start(self) -> None:
        c = self.config
        if not c.max_iterations and not (c.max_cost_usd or c.max_tokens or c.max_minutes):
            self.view.line(
                "!! no iteration limit and no budget: this run goes on until the bot completes or ctrl-c"
            )
        if self.plan.bot.source == "repo":
            self.view.line(f"· using the bot committed in this repository: {self.plan.bot.config_path}")
        self.workspace.open()
        self.mcp = start_mcp(self.plan, self.workspace, self.record.dir / "mcp", self.cancel)
        self.tools += self.mcp.tools() if self.mcp else []
        if self.plan.resume is not None:
            self.conversation = Conversation.load(self.record.conversation_path, self.redactor.redact)
        if hasattr(self.view, "budget"):
            self.view.budget = self.budget.status()

    def _finish(self) -> None:
        """Save the work first; whatever fails after that, the run record is written last."""
        self.guard.finishing = True
        rec = self.record
        try:
            if self.mcp is not None:
                self.mcp.close()  # before the WIP commit: a server must not write into it
            failure = self.workspace.close(self.completion)
            if failure:
                self._set_status("failed", EXIT_FAILED, failure)
            if self.last_meta is not None:
                self.last_meta.action = rec.action or self.last_meta.action
                if rec.wip_commits:
                    self.last_meta.wip_commit = rec.wip_commits[-1]
                self.history.save(self.last_meta)
        finally:
            rec.tokens = _add_tokens(self.base_tokens, self.budget.spent.as_dict())
            rec.cost_usd = self.base_cost + self.budget.spent.cost_usd
            rec.save()

    def _set_status(self, status: str, exit_code: int, reason: str = "") -> None:
        self.record.status, self.record.exit_code = status, exit_code
        if reason:
            self.record.reason = reason

    @property
    def resume_command(self) -> str:
        """Printed at every end of a run, except when there is nothing to resume (the branch is gone)."""
        if self.record.action == "discard" and self.workspace.isolated:
            return ""
        return f"openbot run {self.record.bot} --resume {self.record.run_id}"

    # ── one iteration = one session ──────────────────────────────────────────────────────────────
    def _iteration(self, number: int) -> None:
        plan, rec, ws = self.plan, self.record, self.workspace
        assert ws.sandbox is not None
        skills = self._load_skills(ws.workdir if plan.repo is not None else None)
        system = system_prompt(PromptParts(plan.bot_file.instructions, skills, ws.workdir, ws.skills_dir))
        self.context.fixed_tokens = estimate_tokens(system) + estimate_tokens(
            [t.spec.to_api() for t in self.tools]
        )
        memory = self.memory.for_prompt()
        meta = self.history.create_session(
            rec.run_id,
            self.model.model,
            rec.branch,
            rec.base,
            prompt_summary=(plan.req.prompt or plan.bot_file.instructions)[:200],
        )
        state = IterationState(
            project=rec.project,
            session_number=meta.session_number,
            branch=rec.branch,
            base=rec.base,
            workdir=ws.workdir,
            isolated=ws.isolated,
            memory=memory,
            recent=[m for m in self.history.recent(6) if m.session_id != meta.session_id][:5],
            user_input=self.pending_input,
            task=plan.req.prompt,
            iteration=number,
            max_iterations=self.config.max_iterations,
        )
        self.last_meta = meta
        rec.session_ids.append(meta.session_id)
        rec.iterations += 1
        rec.save()
        write_atomic(
            self.history.session_dir(meta.session_id) / "system_prompt.md", self.redactor.redact(system)
        )
        log = EventLog(self.history.events_path(meta.session_id), self.redactor.redact)
        sink = TeeSink(log, self.view)
        ctx = ToolContext(
            workdir=ws.workdir,
            session_dir=self.history.session_dir(meta.session_id),
            env=ws.env,
            memory=self.memory,
            history=self.history,
            sandbox=ws.sandbox,
            sink=sink,
            cancel=self.cancel,
            default_timeout_secs=self.config.command_timeout_secs,
            redact=self.redactor.redact,
            deadline=self.budget.deadline(),
        )
        sink.emit(
            SessionStarted(
                session_id=meta.session_id,
                session_number=meta.session_number,
                run_id=rec.run_id,
                model=self.model.model,
                branch=rec.branch,
            )
        )
        if ws.sandbox.unconfined_warning:
            sink.emit(Notice(kind="sandbox_unconfined", message=ws.sandbox.unconfined_warning))
        for notice in self.mcp.take_notices() if self.mcp else []:
            sink.emit(notice)
        self.conversation.add_user_text(iteration_prompt(state))
        self.pending_input = []
        turn = Turn(
            model=self.model,
            system=system,
            tools=self.tools,
            conversation=self.conversation,
            ctx=ctx,
            limits=TurnLimits(self.config.max_turn_steps, self.config.max_repeats),
            budget=self.budget,
            context=self.context,
            keep_from=len(self.conversation.messages) - 1,
            take_input=self.inbox.take,
            redact=self.redactor.redact,
        )
        started = time.monotonic()
        status, reason = "failed", ""
        try:
            result = turn.run()
            status = "completed" if result.outcome in ("end_turn", "session_complete") else "limit"
            reason = result.detail
            self.completion = ctx.completion
        except Stop as s:
            status, reason = s.status, s.message
            raise
        except OpenbotError as e:
            status, reason = "failed", e.one_line()
            sink.emit(Error(message=reason, kind=type(e).__name__))
            raise
        except BaseException as e:
            status, reason = "failed", f"{type(e).__name__}: {e}"
            raise
        finally:
            self._finalize_session(meta, turn, ctx, status, reason, time.monotonic() - started)
            sink.emit(SessionEnded(status=status, reason=reason))
            log.close()

    def _load_skills(self, repo_root: Path | None) -> list[Any]:
        """Reload skills each iteration; a skill broken mid-run (maybe by the bot) keeps the last good set."""
        try:
            skills, problems = load_skills_checked(self.plan.bot.name, repo_root, self.config.shipped_skills)
        except ConfigError as e:
            if self.skills is None:
                raise
            self.view.line(f"!! skills not reloaded, keeping the previous set: {e.one_line()}")
            return self.skills
        for problem in problems:
            if problem not in self.skill_problems:  # say it once per run, not every iteration
                self.view.line(f"!! {problem}")
                self.skill_problems.add(problem)
        self.skills = skills
        return skills

    def _finalize_session(
        self, meta: SessionMeta, turn: Turn, ctx: ToolContext, status: str, reason: str, duration: float
    ) -> None:
        usage = turn.result.usage
        meta.status, meta.error = status, reason
        meta.duration_secs = round(duration, 3)
        meta.tokens = usage.as_dict()
        meta.cost_usd = round(usage.cost_usd, 6)
        meta.command_count = ctx.command_count
        summary = ctx.completion["summary"] if ctx.completion else turn.result.last_text
        meta.response_summary = self.redactor.redact(summary.strip())[:500]
        meta.action = ctx.completion["action"] if ctx.completion else ""
        meta.extra["budget"] = self.budget.status()
        sandbox = self.workspace.sandbox
        assert sandbox is not None
        meta.extra["sandbox"] = {
            "requested": self.config.sandbox,
            "enforced": sandbox.mode,
            "warning": sandbox.unconfined_warning,
        }
        self.history.save(meta)
        rec = self.record
        rec.summary = meta.response_summary or rec.summary
        rec.command_count += ctx.command_count
        rec.tokens = _add_tokens(self.base_tokens, self.budget.spent.as_dict())
        rec.cost_usd = self.base_cost + self.budget.spent.cost_usd
        rec.save()


def _add_tokens(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    return {k: a.get(k, 0) + b.get(k, 0) for k in {**a, **b}}
