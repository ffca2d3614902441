"""`openbot run`, step two: start, iterate sessions, and finish on every exit path without losing work.

Runner.execute
   ├─ start   run's events.jsonl, workspace (sweep dead worktrees, worktree, sandbox policy), run.json
   ├─ loop    Session(i): open → turn → close  (openbot.run.session), then max_iterations, then sleep
   ├─ stop    every ending is an exception (openbot.stops, openbot.errors) mapped to status + exit code
   └─ finish  (always) WIP commit + remove the worktree, apply the action, final run.json
"""

from __future__ import annotations

import contextlib
import signal
from itertools import count
from typing import TYPE_CHECKING

from openbot import paths
from openbot.agent.budget import Budget
from openbot.agent.context import CONTEXT_WINDOW, ContextKeeper
from openbot.agent.tools.base import ToolContext
from openbot.agent.tools.registry import default_tools
from openbot.config.skills import Skill, load_skills_checked
from openbot.errors import EXIT_FAILED, ConfigError, OpenbotError, debug_enabled, exit_code_of
from openbot.events import EventLog, Notice, NoticeKind, TeeSink
from openbot.git.gitcmd import warm_end
from openbot.run.mcp_servers import start_mcp
from openbot.run.parts import RunParts
from openbot.run.plan import RunPlan
from openbot.run.protocols import Guard, Input, View
from openbot.run.record import Recorder
from openbot.run.result import RunResult
from openbot.run.session import Session
from openbot.run.signals import GuardedModel, SaveAbandoned
from openbot.run.spend_account import open_account
from openbot.run.stopped_summary import STOPPED, run_summary
from openbot.run.workspace import Workspace
from openbot.state.conversation import Conversation
from openbot.state.history import History, SessionMeta
from openbot.state.runstate import RunRecord, new_run_id
from openbot.stops import Cancel, Completed, Completion, LimitReached, Status, Stop, Unverified

if TYPE_CHECKING:
    from openbot.agent.tools.mcp import McpHub

NO_LIMIT = "no iteration limit and no budget: this run goes on until the bot completes or ctrl-c"


class Runner:
    def __init__(self, plan: RunPlan, view: View, inbox: Input, guard: Guard, cancel: Cancel) -> None:
        self.plan, self.view, self.inbox, self.guard, self.cancel = plan, view, inbox, guard, cancel
        self.recorder = Recorder(new_record(plan))  # the one writer of run.json
        self.recorder.started()
        self.record = rec = self.recorder.record
        redactor, config = plan.redactor, plan.config
        self.notices = TeeSink(view)  # + the run's events.jsonl once `_start` opens it
        # Budgets apply to each invocation; the run record's totals add up across resumes.
        budget = Budget(config.max_cost_usd, config.max_tokens, config.max_minutes)
        budget.ledger = open_account(plan)  # budget.toml: shared caps, read once (exit 2 when invalid)
        self.parts = RunParts(
            plan=plan,
            recorder=self.recorder,
            workspace=Workspace(plan, rec, view, self.notices),
            history=History(paths.history_dir(plan.bot.name, rec.project)),
            # pygit2 (the WIP commit) and the end's modules imported while the model works
            model=GuardedModel(plan.backend, guard, warm_end if plan.use_worktree else None),
            tools=default_tools(config.command_timeout_secs, plan.work.tools(config.tools)),
            conversation=Conversation(rec.conversation_path, redactor.redact),
            context=ContextKeeper(plan.window or CONTEXT_WINDOW, server_compaction=plan.server_compaction),
            budget=budget,
            redactor=redactor,
            view=view,
            cancel=cancel,
            take_input=inbox.take,
            base_tokens=dict(rec.tokens),
            base_cost=rec.cost_usd,
        )
        from openbot.run.feedback import FeedbackCheck  # openbot's check, the review, the feedback

        self.parts.verifier = self.verifier = FeedbackCheck(
            plan, self.recorder, self.parts.workspace, self.parts.tools, self.parts.budget
        )
        from openbot.run.unchanged import Unchanged

        self.parts.unchanged = Unchanged(
            self.parts.workspace, self.recorder, self.verifier.uncommitted, config.question_unchanged
        )
        self.completion: Completion | None = None
        self.asked: Completion | None = None  # what the bot asked, before `merge` was gated on verification
        self.last_meta: SessionMeta | None = None
        self.pending_input: list[str] = []
        self.skills: list[Skill] | None = None
        self.skill_problems: set[str] = set()
        self.run_log: EventLog | None = None
        self.mcp: McpHub | None = None

    def execute(self) -> RunResult:
        try:
            self._start()
            for number in count(1):
                self._iterate(number)
                if self.plan.config.max_iterations and number >= self.plan.config.max_iterations:
                    raise LimitReached("max_iterations", f"iteration limit reached ({number})")
                self._sleep()
        except Completed as done:
            self._complete(done.completion)
            self._set_status(done.status, exit_code_of(done))
        except Unverified as stop:
            self._complete(stop.completion, unverified=True)
            self._set_status(stop.status, exit_code_of(stop), stop.message)
        except Stop as stop:
            self._set_status(stop.status, exit_code_of(stop), stop.message)
        except OpenbotError as e:
            self._set_status("failed", exit_code_of(e) or EXIT_FAILED, e.one_line())
        except Exception as e:  # an openbot bug: still finish cleanly and keep the work
            self._set_status("failed", EXIT_FAILED, f"internal error: {type(e).__name__}: {e}")
            if debug_enabled():
                raise
        finally:
            self._finish()
        return RunResult(self.record, self.resume_command, self.parts.budget.status())

    def _complete(self, asked: Completion, *, unverified: bool = False) -> None:
        self.asked, self.completion = asked, self.verifier.gate(asked)
        if unverified and self.completion is not None and self.completion.action != "merge":
            self.completion = None  # its branch is kept as an unfinished run's: resumable, even when empty

    def _iterate(self, number: int) -> None:
        """One session; whatever ends it, it is recorded before the ending goes on to `execute`."""
        skills = self._load_skills()
        pending, self.pending_input = self.pending_input, []
        session = Session(self.parts, number, skills, pending)
        with session:
            self.last_meta = session.meta
            for notice in self.mcp.take_notices() if self.mcp else []:
                session.sink.emit(notice)
            if number == 1 and self.plan.config.setup:  # each invocation: a resumed run has a new checkout
                self._setup(session.ctx)
            session.turn()

    def _setup(self, ctx: ToolContext) -> None:
        from openbot.run.setup import run_setup

        plan = self.plan
        cache = paths.workspace_dir(plan.bot.name, plan.project.slug) / "cache"  # per repository
        # More than the agent has only for a checkout of the base commit the agent never touched.
        untrusted = self.parts.workspace.holds_agents_work(plan.resume is not None)
        made = run_setup(plan.config.setup, ctx, cache, plan.config.setup_network, untrusted)
        self.parts.workspace.env.update(made)  # ctx.env is this dict: this session and every later one

    def _sleep(self) -> None:
        budget, secs = self.parts.budget, self.plan.config.sleep_secs
        if budget.max_minutes:  # never sleep past the wall-time budget
            secs = max(0.0, min(secs, budget.max_minutes * 60 - budget.minutes() * 60))
        if secs:
            wake = " (type a line to wake the bot)" if self.inbox.enabled else ""
            self.notices.emit(
                Notice(kind="sleeping", message=f"sleeping {secs:.0f}s{wake}", data={"secs": secs})
            )
        budget.close()  # a sleeping bot holds no reservation; check() below reserves again
        self.pending_input = self.inbox.wait(secs, self.cancel)
        if self.cancel.is_set():
            raise self.cancel.interrupted()
        budget.check()  # a limit reached while sleeping stops the run before a new session starts

    # ── start and finish ──────────────────────────────────────────────────────────────────────────
    def _start(self) -> None:
        rec = self.record
        paths.make_private_dir(rec.dir)
        self.run_log = EventLog(rec.dir / "events.jsonl", self.parts.redactor.redact)
        self.notices.sinks.insert(0, self.run_log)  # every line the run says is an event of its log
        self._say_start()
        self.recorder.opened(self.parts.workspace.open())
        self.recorder.confined(self.parts.workspace.confine())
        self.mcp = start_mcp(self.plan, self.parts.workspace, rec.dir / "mcp", self.cancel)
        self.parts.tools += self.mcp.tools() if self.mcp else []
        if self.plan.resume is not None:
            self.parts.conversation = Conversation.load(rec.conversation_path, self.parts.redactor.redact)
        self.view.budget = self.parts.budget.status()

    def _say_start(self) -> None:
        """The run's first lines (events of its log): the bot and why, how it works, warnings, checkout."""
        c = self.plan.config
        notes = [*self.plan.notices, self.plan.work.said()]  # which bot, how it works (config/workmode.py)
        said: list[tuple[NoticeKind, str]] = [("run_note", note) for note in notes]
        if not c.max_iterations and not (c.max_cost_usd or c.max_tokens or c.max_minutes):
            said.append(("run_warning", NO_LIMIT))
        said += [("run_warning", warning) for warning in self.plan.warnings]
        if self.plan.use_worktree and self.plan.repo is not None and self.plan.resume is None:
            from openbot.git.checkout_state import checkout_notices

            said += [("run_note", note) for note in checkout_notices(self.plan.repo, self.plan.with_changes)]
        for kind, text in said:
            self.notices.emit(Notice(kind=kind, message=text))

    def _finish(self) -> None:
        """Save the work first; whatever fails after that, the session and run records are written last."""
        self.guard.finishing = True
        with contextlib.suppress(OSError):  # the ledger must never keep the work from being saved
            self.parts.budget.close()  # no more model calls: the ledger's reservation gives way
        rec = self.record
        try:
            if self.mcp is not None:
                self.mcp.close()  # before the WIP commit: a server must not write into it
            self._close_tools()
            closed = self.guard.saving(lambda: self.parts.workspace.close(self.completion))
            self.recorder.closed(closed)
            failure = closed.failure
            self.verifier.explain(self.asked)
            if failure:
                self._set_status("failed", EXIT_FAILED, failure)
            if self.cancel.signum and rec.status != "failed":  # a signal while saving: not "completed"
                self._set_status("interrupted", 128 + self.cancel.signum, rec.reason or "interrupted")
        except SaveAbandoned as e:
            why = f"{signal.Signals(e.signum).name} while saving the work: the WIP commit was abandoned"
            self._set_status("interrupted", 128 + e.signum, f"{why}; the next run in this repo recovers it")
        except OSError as e:  # a full disk: the records below still say so (they fit in place)
            self._set_status("failed", EXIT_FAILED, f"could not save: {e.strerror or e}: {e.filename or ''}")
        finally:
            if self.run_log is not None:
                self.run_log.close()
            if rec.status in STOPPED:
                self.recorder.summarised(run_summary(rec, self.plan.repo.workdir if self.plan.repo else None))
            self._save_last_session()
            self.parts.save_totals(final=True)

    def _close_tools(self) -> None:
        """Waiting sandboxes reaped before their worktree goes; nothing here may keep the work unsaved."""
        for tool in self.parts.tools:
            close = getattr(tool, "close", None)
            if close is not None:
                with contextlib.suppress(Exception):
                    close()

    def _save_last_session(self) -> None:
        """The last session's final metadata (its action, the WIP commit); on a full disk, in place."""
        meta, rec = self.last_meta, self.record
        if meta is None:
            return
        meta.action = rec.action or meta.action
        if rec.wip_commits:
            meta.wip_commit = rec.wip_commits[-1]
        if meta.status == "running":  # its own closing could not be recorded
            meta.status, meta.error = "failed", rec.reason
        try:
            self.parts.history.save(meta, final=True)
        except OSError as e:
            self._set_status("failed", EXIT_FAILED, f"could not save: {e.strerror or e}: {e.filename or ''}")

    def _set_status(self, status: Status, exit_code: int, reason: str = "") -> None:
        self.recorder.ended(status, exit_code, reason)

    @property
    def resume_command(self) -> str:
        """Printed at every end of a run, except when there is nothing to resume (the branch is gone)."""
        if self.record.action == "discard" and self.parts.workspace.isolated:
            return ""
        return f"openbot run {self.record.bot} --resume {self.record.run_id}"

    def _load_skills(self) -> list[Skill]:
        """Reload skills each iteration; a skill broken mid-run (maybe by the bot) keeps the last good set."""
        plan = self.plan  # the repository's layers were read once, by the plan, where trust checked them
        try:
            skills, problems = load_skills_checked(
                plan.bot.name, None, plan.config.shipped_skills, plan.repo_layers
            )
        except ConfigError as e:
            if self.skills is None:
                raise
            why = f"skills not reloaded, keeping the previous set: {e.one_line()}"
            self.notices.emit(Notice(kind="skills_kept", message=why))
            return self.skills
        for problem in problems:
            if problem not in self.skill_problems:  # say it once per run, not every iteration
                self.notices.emit(Notice(kind="skill_skipped", message=problem))
                self.skill_problems.add(problem)
        self.skills = skills
        return skills


def new_record(plan: RunPlan) -> RunRecord:
    if plan.resume is not None:
        return plan.resume  # `Recorder.started` marks it running again
    return RunRecord(
        run_id=new_run_id(),
        bot=plan.bot.name,
        project=plan.project.slug,
        model=plan.model,
        use_worktree=plan.use_worktree,
        repo_root=str(plan.repo.workdir) if plan.repo is not None else "",
    )


def run(plan: RunPlan, view: View, inbox: Input, guard: Guard, cancel: Cancel) -> RunResult:
    """The run, then word of how it ended to the bot's `[[notify]]` targets."""
    result = Runner(plan, view, inbox, guard, cancel).execute()
    if plan.config.notify:  # only then the notifier and urllib (~6 ms, more under load) at the run's end
        from openbot.run.notify import notify_run

        notify_run(plan, result, view)
    return result
