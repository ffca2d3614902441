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
import subprocess
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from openbot import paths
from openbot.errors import OpenbotError
from openbot.events import EventSink, Notice, NoticeKind
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


def git_identity_env(workdir: Path, bot: str) -> dict[str, str]:
    """Commit identity for the agent when the repository has none configured (common in CI)."""
    try:
        out = subprocess.run(
            ["git", "config", "--get", "user.name"], cwd=workdir, capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.TimeoutExpired):
        return {}
    if out.stdout.strip():
        return {}
    name, email = f"openbot ({bot})", "openbot@localhost"
    return {
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": email,
    }


def current_branch(git_dir: Path) -> str:
    try:
        head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
    except OSError:
        return ""
    return head.removeprefix("ref: refs/heads/") if head.startswith("ref:") else ""


def head_commit(workdir: Path) -> str:
    """The commit checked out in `workdir` ("" when unborn): a `--no-worktree` run's base commit, from
    which a repository-relative notify command is read (run/notify_command.py)."""
    from openbot.git.gitcmd import run_git

    head = run_git(workdir, "rev-parse", "--verify", "-q", "HEAD^{commit}", check=False)
    return head.stdout.strip() if head.returncode == 0 else ""


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
        self.sandbox: SandboxPolicy | None = None

    @property
    def isolated(self) -> bool:
        return self.wt is not None

    def open(self) -> None:
        """Set everything up; what was created before a failure is still torn down by `close`."""
        plan, rec = self.plan, self.record
        for run_id in mark_dead_runs(plan.bot.name, rec.project):
            self._notice(
                "dead_run_marked",
                f"run {run_id} of {plan.bot.name} had died without finishing: marked failed",
                run_id=run_id,
            )
        if plan.use_worktree and plan.repo is not None:
            self._sweep(plan.repo)
            self._checkout(plan.repo)
        else:
            self.workdir = plan.repo.workdir if plan.repo is not None else plan.cwd
            if plan.repo is not None:
                rec.branch = rec.branch or current_branch(plan.repo.git_dir)
                rec.base_commit = rec.base_commit or head_commit(plan.repo.workdir)
        rec.workdir = str(self.workdir)
        rec.save()
        self.tmp_dir = Path(tempfile.mkdtemp(prefix="openbot-run-"))
        rec.tmp_dir = str(self.tmp_dir)  # a later run removes it should this one be killed
        paths.make_private_dir(self.skills_dir)
        self._confine()

    def _notice(self, kind: NoticeKind, message: str, **data: str | list[str] | None) -> None:
        self.notices.emit(Notice(kind=kind, message=message, data=data))

    def _sweep(self, repo: RepoInfo) -> None:
        from openbot.git.sweep import sweep_dead

        for swept in sweep_dead(repo):
            kind: NoticeKind = "worktree_kept" if swept.kept else "worktree_swept"
            self._notice(kind, str(swept), run_id=swept.run_id, branch=swept.branch, wip_commit=swept.wip_sha)
            if swept.bot != "?" and swept.run_id != "?" and not swept.kept:
                mark_dead(swept.bot, swept.run_id, swept.wip_sha)

    def _checkout(self, repo: RepoInfo) -> None:
        """Create the run's own repository, or re-create it from its branch for --resume."""
        from openbot.git.runrepo import create_run_repo, reopen_run_repo

        plan, rec = self.plan, self.record
        if plan.resume is not None:
            start = rec.base_commit if rec.empty_branch_deleted else ""
            self.wt = reopen_run_repo(repo, rec.branch, plan.bot.name, rec.run_id, start)
            rec.empty_branch_deleted = False
        else:
            self.wt = create_run_repo(repo, plan.bot.name, rec.run_id, with_changes=plan.with_changes)
            rec.branch, rec.base_commit = self.wt.branch, self.wt.base_commit
            rec.base = self.wt.base_ref.removeprefix("refs/heads/") or self.wt.base_commit[:12]
        self.workdir = self.wt.path
        for note in self.wt.notes:  # submodules that could not be checked out
            self._notice("submodule", note)

    def _confine(self) -> None:
        from openbot.envpolicy import child_env
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
            network=config.network,
            fallback=config.sandbox_fallback,
        )
        if self.sandbox.unconfined_warning:
            self.notices.emit(
                Notice(kind="run_warning", message=f"WARNING: {self.sandbox.unconfined_warning}")
            )
        from openbot.processes import run_mark

        self.env = {
            **child_env(os.environ, config.env_passthrough),
            **git_identity_env(self.workdir, self.plan.bot.name),
            **run_mark(self.workdir),  # what the sweep goes by: it stops only this run's processes
        }
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

    def close(self, completion: Completion | None) -> str:
        """Save and remove the worktree, apply the action; returns why that failed ("" when it did not)."""
        wips = len(self.record.wip_commits)
        failure = self._remove_worktree() if self.wt is not None else ""
        if completion is not None and not failure:
            action = completion.action
            if action == "merge" and len(self.record.wip_commits) > wips:
                # Only the bot's own commits are merged, never the scratch it left uncommitted.
                failure = self._apply_action("review")
                self.record.action_message = (
                    f"not merged: the bot left uncommitted work (saved as WIP commit "
                    f"{self.record.wip_commits[-1][:12]}); {self.record.action_message}"
                )
            else:
                failure = self._apply_action(action)
        elif not failure and self.wt is not None:
            self._drop_if_empty(completed=False)
        if self.tmp_dir is not None:
            shutil.rmtree(self.tmp_dir, ignore_errors=True)
        return failure

    def _remove_worktree(self) -> str:
        """Bring the run's branch and uncommitted work home, then delete the run repository."""
        from openbot.git.home import bring_home
        from openbot.git.runrepo import remove_run_repo
        from openbot.git.wip import left_out_line, wip_limits

        assert self.wt is not None
        rec = self.record
        message = f"openbot: WIP from {rec.bot} run {rec.run_id} ({rec.status}), saved when the run ended"
        try:
            self.home = home = bring_home(self.wt, message, wip_limits(self.plan.config))
            rec.branch = home.branch
            remove_run_repo(self.wt)
        except OpenbotError as e:
            self._notice(
                "worktree_kept",
                f"could not bring the run's work home from {self.wt.path}: {e.one_line()} (it is left there)",
                path=str(self.wt.path),
            )
            return e.one_line()
        if home.note:
            self._notice("worktree_kept", home.note, path=str(self.wt.path))
        if home.wip:
            rec.wip_commits.append(home.wip)
            self._notice(
                "wip_commit",
                f"uncommitted work saved as WIP commit {home.wip[:12]} on {rec.branch}",
                sha=home.wip,
                branch=rec.branch,
            )
        if home.left_out:
            self._notice("wip_left_out", left_out_line(home.left_out), files=list(home.left_out))
        self._say_hooks(home.tip)
        return ""

    def _say_hooks(self, tip: str) -> None:
        from openbot.git.hookfiles import changed_hooks, said

        assert self.wt is not None and self.plan.repo is not None
        repo = self.plan.repo
        self.hooks = changed_hooks(repo.common_dir, repo.workdir, self.wt.base_commit, tip)
        if self.hooks:
            self._notice("hooks_changed", said(self.hooks), files=self.hooks)

    def _apply_action(self, requested: str) -> str:
        rec = self.record
        if self.wt is None or self.home is None:
            rec.action = "review" if requested != "discard" else "none"
            rec.action_message = (
                f"'{requested}' not applied: the run worked in {self.workdir} without a worktree"
            )
            return ""
        from openbot.git.actions import apply_action

        assert self.plan.repo is not None  # a run repository implies a repository
        if requested != "discard" and self._drop_if_empty(completed=True):
            return ""
        try:
            outcome = apply_action(self.plan.repo, self.wt, requested, self.home)
        except OpenbotError as e:
            rec.action, rec.action_message = "review", f"{requested} failed: {e.one_line()}"
            return rec.action_message
        rec.action = requested if outcome.applied else "review"
        rec.action_message = outcome.message
        if outcome.applied and requested == "merge" and self.hooks:
            from openbot.git.hookfiles import said

            rec.action_message += f"; {said(self.hooks)}"
        return ""

    def _drop_if_empty(self, completed: bool) -> bool:
        """A run that changed nothing deletes its branch, so nightly runs don't pile up empty branches.
        An unfinished run can still be resumed: `--resume` recreates the branch at the same commit."""
        from openbot.git.actions import commits_over, delete_branch

        assert self.wt is not None and self.plan.repo is not None
        home, rec = self.home, self.record
        if home is None or commits_over(self.plan.repo, self.wt.base_commit, home.tip) != 0:
            return False
        if not delete_branch(self.plan.repo, home.branch, home.tip):
            return False
        if completed:
            rec.action = "discard"
            rec.action_message = f"no new commits over {rec.base}: deleted the empty branch {home.branch}"
        else:
            rec.empty_branch_deleted = True
            self._notice(
                "empty_branch_deleted",
                f"no commits on {home.branch}: deleted the empty branch (a resume recreates it)",
                branch=home.branch,
            )
        return True
