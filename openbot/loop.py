"""The run loop: start, iterate sessions, and finish on every exit path without losing work."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

from openbot import paths
from openbot.budget import Budget
from openbot.context import ContextKeeper
from openbot.conversation import Conversation
from openbot.errors import ConfigError, OpenbotError
from openbot.events import Error, EventLog, Notice, SessionEnded, SessionStarted, TeeSink
from openbot.history import History, SessionMeta
from openbot.memory import MemoryStore
from openbot.models.base import load_backend
from openbot.prompt import IterationState, PromptParts, iteration_prompt, system_prompt
from openbot.redact import Redactor
from openbot.runner import (
    EXIT_FAILED,
    EXIT_OK,
    GuardedModel,
    RunPlan,
    RunResult,
    git_identity_env,
    make_tmp_dir,
    new_record,
    remove_tmp_dir,
    stop_for_iterations,
)
from openbot.skills import load_skills
from openbot.stops import Interrupted, Stop
from openbot.tools.base import ToolContext
from openbot.tools.registry import default_tools
from openbot.turn import Turn, TurnLimits


class Runner:
    def __init__(self, plan: RunPlan, view: Any, inbox: Any, guard: Any, cancel: threading.Event) -> None:
        self.plan, self.view, self.inbox, self.guard, self.cancel = plan, view, inbox, guard, cancel
        self.config = plan.config
        self.record = new_record(plan)
        self.redactor = Redactor.from_env(os.environ)
        self.history = History(paths.history_dir(plan.bot.name, self.record.project))
        self.memory = MemoryStore(paths.memory_file(plan.bot.name, self.record.project))
        self.budget = Budget(self.config.max_cost_usd, self.config.max_tokens, self.config.max_minutes)
        self.model = GuardedModel(load_backend(plan.model), guard)
        self.tools = default_tools(self.config.command_timeout_secs)
        self.conversation = Conversation(self.record.conversation_path, self.redactor.redact)
        self.context = ContextKeeper()
        self.wt: Any = None
        self.tmp_dir: Path | None = None
        self.workdir = Path(self.record.workdir or plan.req.cwd)
        self.completion: dict[str, str] | None = None
        self.last_meta: SessionMeta | None = None
        self.pending_input: list[str] = []
        self.skills: list[Any] | None = None

    # ── the loop ──────────────────────────────────────────────────────────────────────────────────
    def execute(self) -> RunResult:
        try:
            self._start()
            for i in range(1, 1_000_000):
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
        if self.config.sleep_secs:
            self.view.line(
                f"  sleeping {self.config.sleep_secs:g}s"
                + (" (type a line to wake the bot)" if self.inbox.enabled else "")
            )
        self.pending_input = self.inbox.wait(self.config.sleep_secs, self.cancel)
        if self.cancel.is_set():
            raise Interrupted(self.guard.signum or 2)

    # ── start and finish ──────────────────────────────────────────────────────────────────────────
    def _start(self) -> None:
        plan, rec = self.plan, self.record
        if plan.use_worktree and plan.repo is not None:
            from openbot.worktree import create_worktree, reopen_branch, sweep_dead

            for swept in sweep_dead(plan.repo):
                self.view.line(f"· recovered a worktree left by a dead run: {swept}")
            if plan.resume is not None:
                self.wt = reopen_branch(plan.repo, rec.branch, plan.bot.name, rec.run_id)
                self.conversation = Conversation.load(rec.conversation_path, self.redactor.redact)
            else:
                self.wt = create_worktree(
                    plan.repo, plan.bot.name, rec.run_id, with_changes=plan.req.with_changes
                )
                rec.branch, rec.base_commit = self.wt.branch, self.wt.base_commit
                rec.base = self.wt.base_ref.removeprefix("refs/heads/") or self.wt.base_commit[:12]
            self.workdir = self.wt.path
        else:
            if plan.resume is not None:
                self.conversation = Conversation.load(rec.conversation_path, self.redactor.redact)
            self.workdir = plan.repo.workdir if plan.repo is not None else plan.req.cwd
            rec.branch = rec.branch or _current_branch(plan.repo)
        rec.workdir = str(self.workdir)
        rec.save()
        self.tmp_dir = make_tmp_dir()
        skills_dir = paths.make_private_dir(paths.bot_skills_dir(plan.bot.name))
        from openbot.sandbox import policy_for_run

        self.sandbox = policy_for_run(
            self.config.sandbox,
            worktree=self.workdir,
            common_dir=plan.repo.common_dir if plan.repo else None,
            worktree_admin_dir=self.wt.admin_dir if self.wt else None,
            tmp_dir=self.tmp_dir,
            skills_dir=skills_dir,
            network=self.config.network,
            fallback=self.config.sandbox_fallback,
        )
        if self.sandbox.unconfined_warning:
            self.view.line(f"!! WARNING: {self.sandbox.unconfined_warning}")
        if hasattr(self.view, "budget"):
            self.view.budget = self.budget.status()
        from openbot.envpolicy import child_env

        self.env = {
            **child_env(os.environ, self.config.env_passthrough),
            **git_identity_env(self.workdir, plan.bot.name),
        }
        self.skills_dir = skills_dir

    def _finish(self) -> None:
        rec = self.record
        if self.wt is not None:
            self._remove_worktree()
        if self.completion is not None:
            self._apply_action()
        remove_tmp_dir(self.tmp_dir)
        if self.last_meta is not None:
            self.last_meta.action = rec.action or self.last_meta.action
            if rec.wip_commits:
                self.last_meta.wip_commit = rec.wip_commits[-1]
            self.history.save(self.last_meta)
        rec.save()

    def _remove_worktree(self) -> None:
        from openbot.worktree import remove_worktree

        rec = self.record
        message = f"openbot: WIP from {rec.bot} run {rec.run_id} ({rec.status}), saved when the run ended"
        try:
            sha = remove_worktree(self.wt, message)
        except OpenbotError as e:
            self.view.line(
                f"!! could not remove the worktree {self.wt.path}: {e.one_line()} (work is left there)"
            )
            self._set_status("failed", EXIT_FAILED, e.one_line())
            return
        if sha:
            rec.wip_commits.append(sha)
            self.view.line(f"· uncommitted work saved as WIP commit {sha[:12]} on {rec.branch}")

    def _apply_action(self) -> None:
        rec = self.record
        assert self.completion is not None
        requested = self.completion["action"]
        if self.wt is None:
            rec.action = "review" if requested != "discard" else "none"
            rec.action_message = (
                f"'{requested}' not applied: the run worked in {self.workdir} without a worktree"
            )
            return
        from openbot.worktree import apply_action

        assert self.plan.repo is not None  # a worktree implies a repository
        try:
            outcome = apply_action(self.plan.repo, self.wt, requested)
        except OpenbotError as e:
            rec.action, rec.action_message = "review", f"{requested} failed: {e.one_line()}"
            self._set_status("failed", EXIT_FAILED, rec.action_message)
            return
        rec.action = requested if outcome.applied else "review"
        rec.action_message = outcome.message

    def _set_status(self, status: str, exit_code: int, reason: str = "") -> None:
        self.record.status, self.record.exit_code = status, exit_code
        if reason:
            self.record.reason = reason

    @property
    def resume_command(self) -> str:
        return f"openbot run {self.record.bot} --resume {self.record.run_id}"

    # ── one iteration = one session ──────────────────────────────────────────────────────────────
    def _iteration(self, number: int) -> None:
        plan, rec = self.plan, self.record
        repo_root = self.workdir if plan.repo is not None else None
        skills = self._load_skills(repo_root)
        system = system_prompt(PromptParts(plan.bot_file.instructions, skills, self.workdir, self.skills_dir))
        memory = self.memory.load()
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
            workdir=self.workdir,
            isolated=self.wt is not None,
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
        log = EventLog(self.history.events_path(meta.session_id), self.redactor.redact)
        sink = TeeSink(log, self.view)
        ctx = ToolContext(
            workdir=self.workdir,
            session_dir=self.history.session_dir(meta.session_id),
            env=self.env,
            memory=self.memory,
            history=self.history,
            sandbox=self.sandbox,
            sink=sink,
            cancel=self.cancel,
            default_timeout_secs=self.config.command_timeout_secs,
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
        if self.sandbox.unconfined_warning:
            sink.emit(Notice(kind="sandbox_unconfined", message=self.sandbox.unconfined_warning))
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
            self.skills = load_skills(self.plan.bot.name, repo_root, self.config.shipped_skills)
        except ConfigError as e:
            if self.skills is None:
                raise
            self.view.line(f"!! skills not reloaded, keeping the previous set: {e.one_line()}")
        return self.skills

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
        meta.extra["sandbox"] = {
            "requested": self.config.sandbox,
            "enforced": self.sandbox.mode,
            "warning": self.sandbox.unconfined_warning,
        }
        self.history.save(meta)
        rec = self.record
        rec.summary = meta.response_summary or rec.summary
        rec.command_count += ctx.command_count
        rec.tokens = self.budget.spent.as_dict()
        rec.cost_usd = self.budget.spent.cost_usd
        rec.save()


def _current_branch(repo: Any) -> str:
    if repo is None:
        return ""
    try:
        head = (Path(repo.git_dir) / "HEAD").read_text(encoding="utf-8").strip()
    except OSError:
        return ""
    return head.removeprefix("ref: refs/heads/") if head.startswith("ref:") else ""
