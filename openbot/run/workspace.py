"""Where a run's agent works: its run repository (or the user's checkout), sandbox, environment, temp dir.

`Workspace.open` sweeps run repositories left by dead runs, then creates (or, for --resume, re-creates
from the branch) the run's own repository and builds the sandbox policy and the child environment.
`Workspace.close` runs on every exit path: the run's branch and its uncommitted work (a WIP commit) are
brought home into the user's repository as `openbot/<name>`, the run repository is removed, and the
`session_complete` action is applied to the commit that was brought home. What it does on the user's
behalf is told as `Notice` events to `notices` (the live view and the run's events.jsonl).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from openbot import paths
from openbot.errors import OpenbotError
from openbot.events import EventSink, Notice, NoticeKind
from openbot.git.identity import current_branch, git_identity_env, head_commit
from openbot.netevent import Connections
from openbot.run.record import Closed, Opened
from openbot.state.runstate import mark_dead, mark_dead_runs
from openbot.stops import Completion

if TYPE_CHECKING:
    from openbot.git.home import Homecoming
    from openbot.git.repo import RepoInfo
    from openbot.git.runsdir import RunRepo
    from openbot.run.plan import RunPlan
    from openbot.run.protocols import View
    from openbot.sandbox import SandboxPolicy
    from openbot.state.runstate import RunRecord


class Workspace:
    def __init__(self, plan: RunPlan, record: RunRecord, view: View, notices: EventSink) -> None:
        self.plan, self.record, self.view, self.notices = plan, record, view, notices
        self.wt: RunRepo | None = None
        self.home: Homecoming | None = None
        self.hooks: list[str] = []  # the user's in-tree hook files the bot's commits changed
        self.workdir = Path(record.workdir or plan.cwd)
        self.tmp_dir: Path | None = None
        self.skills_dir = paths.bot_skills_dir(plan.bot.name)
        self.env: dict[str, str] = {}
        self.server_env: dict[str, str] = {}  # for MCP servers: the user's, nothing pointing into the tree
        self.sandbox: SandboxPolicy | None = None
        self.servers: frozenset[tuple[int, int | None]] = frozenset()  # the MCP servers' processes, started
        self.unsaid: OSError | None = None  # why a notice could not be written
        self.net = Connections(notices, record.network)  # the agent's proxy and the run's tally of it

    @property
    def isolated(self) -> bool:
        return self.wt is not None

    def holds_agents_work(self, resumed: bool) -> str:
        """Why the checkout may hold an agent's work (then the setup gets no more than the agent), or "":
        a resume's commits, a `--no-worktree` checkout, or uncommitted changes `--with-changes` carried
        (an earlier `--no-worktree` agent's edits are such changes)."""
        if resumed or self.wt is None:
            return "the checkout holds the agent's work"
        if self.wt.carried:
            return f"the checkout holds {len(self.wt.carried)} uncommitted change(s) --with-changes carried"
        return ""

    def open(self) -> Opened:
        """Mark dead runs, sweep their run repositories, and make this run's checkout: where it works.
        What was created before a failure is still torn down by `close`."""
        plan, rec = self.plan, self.record
        for run_id in mark_dead_runs(plan.bot.name, rec.project):
            self._notice(
                "dead_run_marked",
                f"run {run_id} of {plan.bot.name} had died without finishing: marked failed",
                run_id=run_id,
            )
        if plan.use_worktree and plan.repo is not None:
            from openbot.git import userrepo

            try:
                self._sweep(plan.repo)
                return self._checkout(plan.repo)
            finally:
                userrepo.forget()  # the plan's reads of HEAD and config served the creation only
        self.workdir = plan.repo.workdir if plan.repo is not None else plan.cwd
        branch, base_commit = rec.branch, rec.base_commit
        if plan.repo is not None:
            branch = branch or current_branch(plan.repo.git_dir)
            base_commit = base_commit or head_commit(plan.repo.workdir)
        return Opened(str(self.workdir), branch, base_commit, rec.base, rec.empty_branch_deleted)

    def confine(self) -> str:
        """The run's temp dir (returned), the bot's skills dir, the sandbox policy and the environment."""
        self.tmp_dir = Path(tempfile.mkdtemp(prefix="openbot-run-"))
        paths.make_private_dir(self.skills_dir)
        self._confine()
        return str(self.tmp_dir)

    def _notice(self, kind: NoticeKind, message: str, **data: str | list[str] | None) -> None:
        try:
            self.notices.emit(Notice(kind=kind, message=message, data=data))
        except OSError as e:  # a full disk: saving the work goes on, and `close` says it failed
            self.unsaid = self.unsaid or e

    def _sweep(self, repo: RepoInfo) -> None:
        from openbot.git.sweep import sweep_dead

        for swept in sweep_dead(repo):
            kind: NoticeKind = "worktree_kept" if swept.kept else "worktree_swept"
            self._notice(kind, str(swept), run_id=swept.run_id, branch=swept.branch, wip_commit=swept.wip_sha)
            if swept.bot != "?" and swept.run_id != "?" and not swept.kept:
                mark_dead(swept.bot, swept.run_id, swept.wip_sha)

    def _checkout(self, repo: RepoInfo) -> Opened:
        """Create the run's own repository, or re-create it from its branch for --resume."""
        from openbot.git.runrepo import create_run_repo, reopen_run_repo

        plan, rec = self.plan, self.record
        if plan.resume is not None:
            start = rec.base_commit if rec.empty_branch_deleted else ""
            self.wt = wt = reopen_run_repo(repo, rec.branch, plan.bot.name, rec.run_id, start)
            where = Opened(str(wt.path), rec.branch, rec.base_commit, rec.base)
        else:
            self.wt = wt = create_run_repo(repo, plan.bot.name, rec.run_id, with_changes=plan.with_changes)
            base = wt.base_ref.removeprefix("refs/heads/") or wt.base_commit[:12]
            where = Opened(str(wt.path), wt.branch, wt.base_commit, base)
        self.workdir = wt.path
        for note in wt.notes:  # submodules that could not be checked out
            self._notice("submodule", note)
        return where

    def _confine(self) -> None:
        from openbot.config.netconfig import listed
        from openbot.envpolicy import child_env, without_own_venv
        from openbot.processes import run_mark
        from openbot.sandbox import policy_for_run

        config, repo = self.plan.config, self.plan.repo
        assert self.tmp_dir is not None
        self.sandbox = policy_for_run(
            config.sandbox,
            worktree=self.workdir,
            # a run repository: writable are its checkout and its own git dir, never the user's .git
            common_dir=repo.common_dir if repo and not self.wt else None,
            worktree_admin_dir=self.wt.git_dir if self.wt else None,
            tmp_dir=self.tmp_dir,
            skills_dir=self.skills_dir,
            network=config.network is True,
            fallback=config.sandbox_fallback,
        )
        self.sandbox = listed(config.network, "network", self.sandbox, self.net)  # a proxy for the run
        if self.sandbox.unconfined_warning:
            self._notice("run_warning", f"WARNING: {self.sandbox.unconfined_warning}")
        if self.sandbox.shielded:
            own = ", ".join(str(p) for p in self.sandbox.shielded)
            self._notice(
                "run_warning",
                f"openbot runs from {own}, inside the bot's writable tree: it stays read-only to the bot's"
                " commands (to let a bot change it, run openbot from a virtualenv outside the checkout)",
                paths=[str(p) for p in self.sandbox.shielded],
            )
        self.env = {
            **without_own_venv(child_env(os.environ, config.env_passthrough)),
            **git_identity_env(self.workdir, self.plan.bot.name),
            **run_mark(self.workdir),  # what the sweep goes by: it stops only this run's processes
        }
        self.server_env = dict(self.env)  # before the PYTHONPATH twins and setup's venv: the user's only
        if repo is not None and self.wt is not None:
            self._editable_twins(repo.workdir)

    def _editable_twins(self, user_checkout: Path) -> None:
        """The user's editable install of this repository would import their checkout: PYTHONPATH points
        the bot's python at the same directories in its own (openbot.run.editable)."""
        from openbot.run.editable import editable_paths

        twins = editable_paths(self.env, user_checkout, self.workdir)
        if twins:
            self.env["PYTHONPATH"] = os.pathsep.join([*twins, *filter(None, [self.env.get("PYTHONPATH")])])
            self._notice(
                "editable_install",
                f"your editable install of this repository imports from {user_checkout}; the bot's commands"
                f" get PYTHONPATH={os.pathsep.join(twins)} so they import the bot's checkout",
            )

    def close(self, completion: Completion | None) -> Closed:
        """Bring the work home and remove the run repository, then apply the action: where the work is."""
        self.net.close()  # the agent's proxy dies with the run (its commands have ended)
        discard = completion is not None and completion.action == "discard"  # no WIP commit to delete
        saved = self._remove_worktree(discard) if self.wt is not None else Closed()
        if completion is not None and saved.failure is None:
            from openbot.run.verify_outcome import merge_refused

            why = merge_refused(self.record, self.home, saved.wip_commit, completion.action)
            done = self._apply_action("review" if why else completion.action)
            done = replace(done, action_message=f"{why}; {done.action_message}") if why else done
            saved = replace(done, branch=saved.branch, wip_commit=saved.wip_commit)
        elif saved.failure is None and self.wt is not None and self._drop_unfinished():
            saved = replace(saved, empty_branch_deleted=True)
        if self.tmp_dir is not None:
            shutil.rmtree(self.tmp_dir, ignore_errors=True)
        if (e := self.unsaid) is not None and saved.failure is None:
            saved = replace(saved, failure=f"could not save: {e.strerror or e}: {e.filename or ''}")
        return saved

    def _remove_worktree(self, discard: bool) -> Closed:
        """Bring the run's branch and uncommitted work home, then delete the run repository."""
        from openbot.git.home import bring_home
        from openbot.git.runrepo import remove_run_repo
        from openbot.git.wip import left_out_line, wip_limits

        assert self.wt is not None
        rec, config = self.record, self.plan.config
        limits = wip_limits(config.wip_max_file_mb, config.wip_max_total_mb)
        # True whatever happens to the branch later (a resume that completes, a PR): no status in it
        message = f"openbot: WIP: uncommitted work of {rec.bot}, saved at the end of run {rec.run_id}"
        home: Homecoming | None = None
        try:
            self.home = home = bring_home(self.wt, message, limits, empty_branch=False, discard=discard)
            remove_run_repo(self.wt, later=True)  # the work is home: nothing waits for the deletion
        except OpenbotError as e:
            self._notice(
                "worktree_kept",
                f"could not bring the run's work home from {self.wt.path}: {e.one_line()} (it is left there)",
                path=str(self.wt.path),
            )
            return Closed(branch=home.branch if home is not None else "", failure=e.one_line())
        if home.note:
            self._notice("worktree_kept", home.note, path=str(self.wt.path))
        if home.wip:
            self._notice(
                "wip_commit",
                f"uncommitted work saved as WIP commit {home.wip[:12]} on {home.branch}",
                sha=home.wip,
                branch=home.branch,
            )
        if home.left_out:
            self._notice("wip_left_out", left_out_line(home.left_out), files=list(home.left_out))
        self._say_hooks(home.tip if home.made else self.wt.base_commit)  # a discard's: none of the user's
        return Closed(branch=home.branch, wip_commit=home.wip or "")

    def _say_hooks(self, tip: str) -> None:
        from openbot.git.hookfiles import changed_hooks, said

        assert self.wt is not None and self.plan.repo is not None
        repo = self.plan.repo
        self.hooks = changed_hooks(repo.common_dir, repo.workdir, self.wt.base_commit, tip)
        if self.hooks:
            self._notice("hooks_changed", said(self.hooks), files=self.hooks)

    def _apply_action(self, requested: str) -> Closed:
        if self.wt is None or self.home is None:
            why = f"'{requested}' not applied: the run worked in {self.workdir} without a worktree"
            return Closed(action="review" if requested != "discard" else "none", action_message=why)
        from openbot.git.actions import apply_action, discarded

        assert self.plan.repo is not None  # a run repository implies a repository
        home = self.home
        if not home.made:  # nothing new, or discarded: no branch was made, none is kept
            said = discarded(home, self.wt.base_commit, self.record.base)
            return Closed(action="discard", action_message=said)
        if requested != "discard" and self._drop_if_empty():
            said = f"no new commits over {self.record.base}: deleted the empty branch {home.branch}"
            return Closed(action="discard", action_message=said)
        try:
            outcome = apply_action(self.plan.repo, self.wt, requested, home)
        except OpenbotError as e:
            why = f"{requested} failed: {e.one_line()}"
            return Closed(action="review", action_message=why, failure=why)
        said = outcome.message
        if outcome.applied and requested == "merge" and self.hooks:
            from openbot.git.hookfiles import said as hooks_said

            said += f"; {hooks_said(self.hooks)}"
        return Closed(action=requested if outcome.applied else "review", action_message=said)

    def _drop_unfinished(self) -> bool:
        """An unfinished run that made no commits deletes its branch (said); `--resume` recreates it."""
        if not self._drop_if_empty():
            return False
        assert self.home is not None
        branch, done = self.home.branch, "deleted the empty branch" if self.home.made else "no branch kept"
        self._notice(
            "empty_branch_deleted", f"no commits on {branch}: {done} (a resume recreates it)", branch=branch
        )
        return True

    def _drop_if_empty(self) -> bool:
        """A run that changed nothing deletes its branch, so nightly runs don't pile up empty branches."""
        from openbot.git.actions import commits_over, delete_branch

        assert self.wt is not None and self.plan.repo is not None
        home = self.home
        if home is not None and not home.made:
            return True  # never made (bring_home): nothing to delete
        if home is None or commits_over(self.plan.repo, self.wt.base_commit, home.tip) != 0:
            return False
        return delete_branch(self.plan.repo, home.branch, home.tip)
