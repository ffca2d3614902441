"""`openbot run`: plan (validate everything, create nothing), then iterate sessions in a worktree.

plan_run ──► Runner.execute
               ├─ start: sweep dead worktrees, create/reopen the worktree, sandbox policy, run.json
               ├─ loop:  iteration → (session dir, events.jsonl, one Turn, metadata) → sleep/inbox
               └─ finish (always): WIP-commit + remove worktree, apply the action, final run.json
"""

from __future__ import annotations

import os
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openbot.agent.models.base import ModelBackend, ModelReply, ModelRequest, is_scripted
from openbot.config.botconfig import BotConfig, BotFile, resolve
from openbot.config.bots import BotRef, find_bot
from openbot.config.integrations import check_environment
from openbot.errors import UsageError
from openbot.git.repo import RepoInfo, find_repo
from openbot.state.project import Project, resolve_project
from openbot.state.runstate import RunRecord, find_run, new_run_id
from openbot.stops import LimitReached

EXIT_OK, EXIT_FAILED, EXIT_LIMIT = 0, 1, 3


@dataclass
class RunRequest:
    """What the user asked for on the command line (flags that are None were not given)."""

    bot: str
    cwd: Path
    prompt: str = ""
    model: str | None = None
    max_iterations: int | None = None
    sleep_secs: float | None = None
    sandbox: str | None = None
    skip_git_check: bool | None = None
    no_worktree: bool = False
    with_changes: bool = False
    project: str | None = None
    resume: str | None = None
    extra_flags: dict[str, Any] = field(default_factory=dict)  # budgets and later config-backed flags


@dataclass
class RunPlan:
    """A validated run: every check that can fail on bad input has passed, nothing is created yet."""

    req: RunRequest
    bot: BotRef
    bot_file: BotFile
    config: BotConfig
    model: str
    project: Project
    repo: RepoInfo | None
    use_worktree: bool
    resume: RunRecord | None


def _resolve_model(model: str, base_dir: Path) -> str:
    if not is_scripted(model):
        return model
    path = Path(model.removeprefix("scripted:")).expanduser()
    return f"scripted:{path if path.is_absolute() else (base_dir / path).resolve()}"


def plan_run(req: RunRequest) -> RunPlan:
    repo = find_repo(req.cwd)
    bot = find_bot(req.bot, repo.workdir if repo else None)
    bot_file = bot.load()
    flags = {
        "model": req.model,
        "max_iterations": req.max_iterations,
        "sleep_secs": req.sleep_secs,
        "sandbox": req.sandbox,
        "skip_git_check": req.skip_git_check,
        **req.extra_flags,
    }
    config = resolve(bot_file.values, flags, str(bot_file.path))
    if repo is None and not config.skip_git_check:
        raise UsageError(
            f"not inside a git repository: {req.cwd}",
            hint="cd into a repository, or pass --skip-git-check to work in this directory (no worktree)",
        )
    base_dir = req.cwd if req.model else bot_file.path.parent
    model = _resolve_model(config.model, base_dir)
    if is_scripted(model):
        from openbot.agent.models.scripted import ScriptedModel

        ScriptedModel.from_file(model.removeprefix("scripted:"))  # a bad script fails now, not mid-run
    elif not os.environ.get("ANTHROPIC_API_KEY"):
        raise UsageError(
            f"ANTHROPIC_API_KEY is not set (needed by model '{model}')",
            hint='export ANTHROPIC_API_KEY=..., or dry-run with model = "scripted:<path>"',
        )
    project = resolve_project(req.cwd, req.project)
    resume = find_run(bot.name, project.slug, req.resume) if req.resume else None
    if resume is not None and req.project is None:
        project = Project(slug=resume.project, repo=project.repo)
    if resume is not None and req.no_worktree and resume.use_worktree:
        raise UsageError(
            f"run {resume.run_id} worked in a worktree; it resumes in one",
            hint="drop --no-worktree, or start a new run with it",
        )
    use_worktree = repo is not None and not req.no_worktree and (resume is None or resume.use_worktree)
    if use_worktree and repo is not None:
        _check_repo(repo, resume)
    if resume is not None:
        _check_resumable(resume)
    _check_sandbox(config, req.cwd)
    check_environment(config, str(bot_file.path), os.environ)  # an unset ${NAME} fails now, not mid-run
    from openbot.paths import memory_file
    from openbot.state.memory import MemoryStore

    MemoryStore(memory_file(bot.name, project.slug)).load()  # a damaged memory.json fails now, not mid-run
    return RunPlan(req, bot, bot_file, config, model, project, repo, use_worktree, resume)


def _check_repo(repo: RepoInfo, resume: RunRecord | None) -> None:
    """An empty repository, or a resumed run whose branch is gone, is a usage error before anything exists."""
    import pygit2

    git = pygit2.Repository(str(repo.workdir))
    if resume is None and git.head_is_unborn:
        raise UsageError(
            f"the repository at {repo.workdir} has no commits yet",
            hint="make a first commit; the bot's branch starts from your HEAD",
        )
    if (
        resume is not None
        and not resume.empty_branch_deleted
        and git.branches.local.get(resume.branch) is None
    ):
        why = "deleted by the run's discard action" if resume.action == "discard" else "no longer exists"
        raise UsageError(
            f"cannot resume run {resume.run_id}: its branch '{resume.branch}' {why}",
            hint=f"start a new run: openbot run {resume.bot}",
        )


def _check_resumable(rec: RunRecord) -> None:
    """Refuse to resume a run whose process is still alive on this machine."""
    if rec.pid == os.getpid() or not rec.process_alive():
        return  # finished, or died without finishing (resuming it is what the user wants), or elsewhere
    raise UsageError(
        f"run {rec.run_id} is still running (pid {rec.pid})",
        hint=f"stop it first (kill -INT {rec.pid}), then resume it",
    )


def _check_sandbox(config: BotConfig, cwd: Path) -> None:
    """Fail before anything is created when the kernel cannot enforce the requested sandbox."""
    from openbot.sandbox import policy_for_run

    policy_for_run(
        config.sandbox,
        worktree=cwd,
        common_dir=None,
        worktree_admin_dir=None,
        tmp_dir=Path(tempfile.gettempdir()),
        skills_dir=None,
        network=config.network,
        fallback=config.sandbox_fallback,
    )


class GuardedModel:
    """Marks model calls so a first ctrl-c can abandon a streaming call at once."""

    def __init__(self, inner: ModelBackend, guard: Any) -> None:
        self.inner = inner
        self.model = inner.model
        self.guard = guard

    def complete(self, request: ModelRequest, sink: Any) -> ModelReply:
        with self.guard.model_call():
            return self.inner.complete(request, sink)


@dataclass
class RunResult:
    record: RunRecord
    resume_command: str
    budget: dict[str, Any]

    @property
    def exit_code(self) -> int:
        return self.record.exit_code if self.record.exit_code is not None else EXIT_FAILED

    def to_json(self) -> dict[str, Any]:
        r = self.record
        return {
            "run_id": r.run_id,
            "bot": r.bot,
            "project": r.project,
            "branch": r.branch,
            "base": r.base,
            "status": r.status,
            "exit_code": self.exit_code,
            "iterations": r.iterations,
            "summary": r.summary,
            "action": r.action,
            "action_message": r.action_message,
            "reason": r.reason,
            "tokens": r.tokens,
            "cost_usd": round(r.cost_usd, 6),
            "command_count": r.command_count,
            "session_ids": r.session_ids,
            "wip_commits": r.wip_commits,
            "budget": self.budget,
            "resume_command": self.resume_command,
        }


def run(plan: RunPlan, view: Any, inbox: Any, guard: Any, cancel: threading.Event) -> RunResult:
    from openbot.run.notify import notify_run
    from openbot.run.runner import Runner

    result = Runner(plan, view, inbox, guard, cancel).execute()
    notify_run(plan, result, view)
    return result


def new_record(plan: RunPlan) -> RunRecord:
    if plan.resume is not None:
        rec = plan.resume
        rec.status, rec.exit_code, rec.reason, rec.pid = "running", None, "", os.getpid()
        return rec
    return RunRecord(
        run_id=new_run_id(),
        bot=plan.bot.name,
        project=plan.project.slug,
        model=plan.model,
        use_worktree=plan.use_worktree,
    )


def stop_for_iterations(iteration: int, config: BotConfig) -> None:
    if config.max_iterations and iteration >= config.max_iterations:
        raise LimitReached("max_iterations", f"iteration limit reached ({config.max_iterations})")
