"""openbot checks the bot's work itself when the bot calls session_complete, before any merge.

Verifier.check(completion, ctx)     (the session calls it when a turn ends with Completed)
  1. what the agent left uncommitted is listed (`git status`, confined like its own commands): it is
     not verified, and the agent is told so
  2. the agent's processes are stopped: the shell's waiting sandbox, and every process carrying the
     run's mark but the MCP servers' own as they were once started — their children since are stopped
  3. the branch tip is checked out fresh in a temp dir of openbot's (git/verifytree.py), from verified
     objects; the setup step runs there again (its `.venv` in the agent's checkout is the agent's)
  4. the verify commands (the bot's, then $OPENBOT_HOME/verify.toml's) run in a sandbox of that
     checkout with the agent's walls and no network, each bounded by verify_timeout_secs
  5. passed: a `refs/notes/openbot` note on the commit; failed: the next turn tells the agent what
     failed, until verify_attempts failures end the run `unverified` (exit 5)
The commands come from the plan (config as loaded when the run started): never from the agent's tree.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from openbot import gate, paths
from openbot.agent.tools.base import Tool, ToolContext, ToolFailed
from openbot.agent.tools.shell import ShellTool
from openbot.config.verify import EVIDENT, setup_caveat
from openbot.errors import OpenbotError
from openbot.events import EventSink, Notice
from openbot.git.checkout_state import status_look
from openbot.git.runsdir import empty_trash_later
from openbot.run.plan import RunPlan
from openbot.run.record import Recorder
from openbot.run.verify_outcome import NOTHING_CHECKED, Collect, Outcome, Verification, feedback, shown_tail
from openbot.run.workspace import Workspace
from openbot.stops import Completion, Unverified

if TYPE_CHECKING:
    from openbot.git.runsdir import RunRepo
    from openbot.sandbox import SandboxPolicy


class Verifier:
    """One run's verification: how many attempts it took, and what the record says of it."""

    def __init__(self, plan: RunPlan, recorder: Recorder, workspace: Workspace, tools: list[Tool]) -> None:
        self.spec, self.plan, self.recorder, self.record = plan.verify, plan, recorder, recorder.record
        self.workspace, self.tools = workspace, tools  # tools: the run's list (MCP tools join it later)
        self.attempt = 0
        if self.spec.evident:
            plan.notices.append(f"checking the work with `{self.spec.evident}` ({EVIDENT})")
        caveat = setup_caveat(plan.config, self.spec.commands)
        if caveat and caveat not in plan.warnings:
            plan.warnings.append(caveat)  # said when the run starts
        recorder.verifying(self.spec.merge_unverified, anew=bool(self.spec.commands))  # a resume: anew

    def check(self, completion: Completion, ctx: ToolContext) -> str | None:
        """None: the completion stands (verified, or nothing to verify). Otherwise the feedback for the
        agent's next turn; Unverified once the failures reach verify_attempts."""
        if not self.spec.commands or completion.action == "discard" or self._repo() is None:
            ctx.sink.emit(Notice(kind="not_verified", message=NOTHING_CHECKED))  # said where the run ends
            return None  # discard: nothing is kept that a check could vouch for
        self.attempt += 1
        outcome = self._run(ctx)
        if ctx.cancel.is_set():
            raise ctx.cancel.interrupted()
        note = self._note(outcome) if outcome.passed else ""
        self._record(outcome, note, ctx.sink)
        if outcome.passed:  # then the bot's `review`, if it has one (run/review.py)
            return None
        if self.attempt >= self.spec.attempts:
            why = f"not verified after {self.attempt} attempt(s): {outcome.reason()}"
            raise Unverified(why, completion)
        return feedback(outcome, self.attempt, self.spec.attempts, edits=self.plan.work.mode == "edits")

    def gate(self, completion: Completion | None) -> Completion | None:
        """`merge` applies only to verified work, unless the bot says merge_unverified (which a
        session_complete written as text does not get: a model may have quoted it)."""
        if completion is None or completion.action != "merge" or self.allowed_merge(completion):
            return completion
        return dataclasses.replace(completion, action="review")

    def allowed_merge(self, asked: Completion) -> bool:
        return self.record.verified is True or self.spec.merge_unverified and not asked.as_text

    def explain(self, asked: Completion | None) -> None:
        """Say in the record why a requested merge became a review (after the action was applied); an
        unverified run's branch was kept like an unfinished run's (Runner._complete)."""
        rec = self.record
        if asked is None or self.allowed_merge(asked) and asked.action == "merge":
            return
        if rec.status in ("unverified", "unreviewed") and not rec.action:
            action = "review" if not rec.empty_branch_deleted else ""
            kept = f"branch {rec.branch} kept for review" if action else "no commits to keep"
            head = "not merged: " if asked.action == "merge" else ""
            what = "approved by its review" if rec.status == "unreviewed" else "verified"
            said = f"{head}the work was not {what}: {kept} (resume the run to try again)"
            self.recorder.explained(action, said)
        elif asked.action == "merge":
            why = "the work was not verified" if self.spec.commands else "no verify commands checked the work"
            unless = "merge_unverified = false"
            if asked.as_text:
                unless = "asked in text, merge takes verified work only"
            said = f"not merged: {why} ({unless}); {rec.action_message}".strip("; ")
            self.recorder.explained(rec.action, said)

    def _repo(self) -> RunRepo | None:
        return self.workspace.wt

    def _run(self, ctx: ToolContext) -> Outcome:
        uncommitted = self.uncommitted()
        stopped = self._stop_agent()
        into = Path(tempfile.mkdtemp(prefix="openbot-verify-"))
        try:
            return self._run_in(into, ctx, uncommitted, stopped)
        finally:
            empty_trash_later([into])  # the checkout is done with: nothing waits for its deletion

    def _run_in(self, into: Path, ctx: ToolContext, uncommitted: tuple[str, ...], stopped: int) -> Outcome:
        from openbot.git.verifytree import clean_checkout

        try:
            repo = self._repo()
            assert repo is not None  # check() verifies only runs with a run repository
            sha, checkout, git_dir, drivers = clean_checkout(repo, into)
        except (OpenbotError, OSError) as e:
            why = e.one_line() if isinstance(e, OpenbotError) else str(e)
            return Outcome(
                "", (), uncommitted, stopped, f"the committed work could not be checked out: {why}"
            )
        if drivers:  # said: those files were checked with their committed content
            names = ", ".join(f"{k} = {v!r}" for k, v in drivers.items())
            said = f"the clean checkout ran without {names}: it names a file in the repository"
            ctx.sink.emit(Notice(kind="run_warning", message=said, data={"drivers": drivers}))
        vctx = self._context(ctx, checkout, git_dir, into / "tmp")
        checks, error = self._setup(vctx)
        shell = ShellTool(self.spec.timeout_secs, gate.VERIFY_CHECK)
        try:
            for number, command in enumerate(self.spec.commands, 1) if not error else ():
                source = "team" if number > len(self.spec.commands) - len(self.spec.team) else "bot"
                sink = Collect(source)
                step = dataclasses.replace(vctx, sink=sink)
                try:
                    run_id = f"verify-{self.attempt}-{number}"
                    shell.run({"command": command, "timeout_secs": self.spec.timeout_secs}, step, run_id)
                except ToolFailed as e:
                    error = f"`{command}` could not run: {e}"
                    break
                checks += sink.checks
        finally:
            shell.close()
        return Outcome(sha, tuple(checks), uncommitted, stopped, error)

    def _context(self, ctx: ToolContext, checkout: Path, git_dir: Path, tmp: Path) -> ToolContext:
        """The agent's walls around the fresh checkout, without network, in a clean environment."""
        from openbot.envpolicy import child_env, without_own_venv
        from openbot.git.identity import git_identity_env
        from openbot.processes import run_mark
        from openbot.run.editable import editable_paths
        from openbot.sandbox import policy_for_run

        config = self.plan.config
        policy = policy_for_run(
            config.sandbox,
            worktree=checkout,
            common_dir=None,
            worktree_admin_dir=git_dir,
            tmp_dir=tmp,
            skills_dir=None,
            network=False,
            fallback=config.sandbox_fallback,
        )
        env = {
            **without_own_venv(child_env(os.environ, config.env_passthrough)),
            **git_identity_env(checkout, self.plan.bot.name),
            **run_mark(checkout),
        }
        if self.plan.repo is not None:  # the user's editable install must not be what the checks import
            twins = editable_paths(env, self.plan.repo.workdir, checkout)
            if twins:
                env["PYTHONPATH"] = os.pathsep.join([*twins, *filter(None, [env.get("PYTHONPATH")])])
        return dataclasses.replace(ctx, workdir=checkout, env=env, sandbox=self._conceal(policy))

    def _conceal(self, policy: SandboxPolicy) -> SandboxPolicy:
        """The check sees nothing the agent could write — its checkout, the run repositories, its temp and
        skills dirs: a link the agent committed that points out of the clean checkout reaches nothing of
        the agent's, and the check fails as it will on main."""
        agent, rr = self.workspace.sandbox, self._repo()
        concealed = [*(agent.writable if agent is not None else ()), *([rr.root] if rr is not None else ())]
        return dataclasses.replace(policy, concealed=tuple(p.resolve() for p in concealed))

    def _setup(self, vctx: ToolContext) -> tuple[list[dict[str, object]], str]:
        """The setup step again, in the fresh checkout: its products there are openbot's, not the agent's."""
        from openbot.config.netconfig import check_list, proxied
        from openbot.run.setup import run_setup

        if not self.plan.config.setup:
            return [], ""
        sink = Collect("setup")
        plan = self.plan
        cache = paths.workspace_dir(plan.bot.name, plan.project.slug) / "cache"
        try:
            # The branch tip is the agent's work: its setup gets no cache and no setup network, only the
            # hosts `verify_network` (or setup_network's list) names, through a proxy (docs/VERIFY.md).
            config = plan.config
            listed = check_list(config.setup_network, config.verify_network, config.network)
            with proxied(
                listed, "verify_network", vctx.sandbox, vctx.sink
            ) as policy:  # events: the session's
                sctx = dataclasses.replace(vctx, sink=sink, sandbox=policy)
                made = run_setup(config.setup, sctx, cache, False, "the branch is the agent's work")
        except OpenbotError as e:
            return sink.checks, f"the setup step failed in the clean checkout: {e.message}"
        vctx.env.update(made)
        return sink.checks, ""

    def uncommitted(self) -> tuple[str, ...]:
        """What `git status` lists in the agent's checkout, run confined like the agent's own commands
        (its output only informs the agent; nothing is decided on it)."""
        ws = self.workspace
        env = {**ws.env, **(ws.sandbox.env() if ws.sandbox is not None else {})}
        argv = status_look()
        waited = self._in_waiting_sandbox(argv, env)
        if waited is None:
            from openbot.sandbox import SandboxPolicy

            policy = ws.sandbox if ws.sandbox is not None else SandboxPolicy.unconfined()
            try:
                out = gate.run(
                    gate.VERIFY_STATUS, policy.wrap(argv), cwd=ws.workdir, env=env, capture_output=True,
                    text=True, timeout=60, stdin=gate.DEVNULL, start_new_session=True,
                )  # fmt: skip
            except (OSError, gate.TimeoutExpired):
                return ()
            waited = out.stdout if out.returncode == 0 else ""
        lines = [ln for ln in waited.splitlines() if ln.strip()]
        return tuple(lines[:20]) + ((f"... and {len(lines) - 20} more",) if len(lines) > 20 else ())

    def _in_waiting_sandbox(self, argv: list[str], env: dict[str, str]) -> str | None:
        """`argv`'s output (or "" when it failed) in the shell tool's waiting sandbox: the same walls, in
        the agent's checkout, started after its last command; None when there is none to use (a new
        sandbox's start would be most of this check's time)."""
        ws, sandbox = self.workspace, self.workspace.sandbox
        shell = next((t for t in self.tools if isinstance(t, ShellTool)), None)
        if shell is None or sandbox is None:
            return None
        return shell.output_in_waiting(sandbox, ws.workdir, argv, env)

    def _stop_agent(self) -> int:
        """No process of the agent's is alive while its work is checked."""
        from openbot.processes import stop_processes_in

        for tool in self.tools:
            if isinstance(tool, ShellTool):
                tool.close()  # its sandbox waiting for the next command
        return stop_processes_in(self.workspace.workdir, sparing=self.workspace.servers)

    def _note(self, outcome: Outcome) -> str:
        from openbot.git.verifytree import NOTES_REF, add_note

        rec = self.record
        lines = [f"Verified-by: openbot; {len(outcome.checks)} check(s) passed at {outcome.sha}"]
        lines += [f"Passed: {c['command']}" for c in outcome.checks if c["source"] != "setup"]
        lines += [f"Bot: {rec.bot}", f"Run: {rec.run_id}"]
        repo = self._repo()
        assert repo is not None
        failure = add_note(repo.common_dir, outcome.sha, "\n".join(lines))
        return f"{NOTES_REF} (not written: {failure})" if failure else NOTES_REF

    def _record(self, outcome: Outcome, note: str, sink: EventSink) -> None:
        event = Verification(
            attempt=self.attempt,
            attempts=self.spec.attempts,
            sha=outcome.sha,
            passed=outcome.passed,
            checks=list(outcome.checks),
            reason="" if outcome.passed else outcome.reason(),
            uncommitted=list(outcome.uncommitted),
            stopped_processes=outcome.stopped,
            note=note,
            tail="" if outcome.passed else shown_tail(outcome, self.plan.redactor.redact),
        )
        sink.emit(event)
        summary = {k: v for k, v in dataclasses.asdict(event).items() if k != "checks"}
        summary["checks"] = [{k: v for k, v in c.items() if k != "output"} for c in outcome.checks]
        self.recorder.verified(outcome.passed, outcome.sha if outcome.passed else "", summary)
