"""`openbot run`, step one: check everything that can fail on bad input, create nothing, and keep what was
built for the check (config, model backend, memory store, repository) in the plan the runner uses.

    plan_run ──► Runner.execute (openbot.run.runner)
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from openbot.agent.models.base import ModelBackend
from openbot.agent.models.catalog import ModelFacts, lookup
from openbot.agent.models.params import server_trigger
from openbot.agent.models.registry import fallback_chain, load_backend, make_ready
from openbot.config.botconfig import BotConfig, resolve
from openbot.config.bots import BotRef, find_bot
from openbot.config.feedback import Feedback
from openbot.config.integrations import check_environment, secret_values
from openbot.config.model_names import parse_model, resolve_script
from openbot.config.skills import Layer
from openbot.config.verify import VerifySpec
from openbot.config.workmode import WorkMode, choose
from openbot.errors import UsageError
from openbot.git.repo import RepoInfo, find_repo
from openbot.git.runsdir import awaiting_home
from openbot.redact import Redactor
from openbot.state.memory import MemoryStore
from openbot.state.project import Project, resolve_project
from openbot.state.runstate import LAST, RunRecord, find_run


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
    bot_source: str | None = None  # "home" | "repo": which of two same-named bots (default: the home one)
    trust_repo_bots: bool = False  # CI: trust the repository's committed bots and skills explicitly
    allow_unknown_price: bool = False
    extra_flags: dict[str, object] = field(default_factory=dict)  # budgets and later config-backed flags


@dataclass
class RunPlan:
    """A validated run: every check that can fail on bad input has passed, nothing is created yet."""

    bot: BotRef
    config: BotConfig  # defaults < config.md < flags (config_path: bot.config_path)
    instructions: str  # the body of config.md
    task: str  # --prompt: added to every iteration
    cwd: Path
    model: str  # the resolved model name (a script path made absolute)
    backend: ModelBackend
    memory: MemoryStore
    redactor: Redactor  # the environment's secrets and those the config names (MCP, notify)
    project: Project
    repo: RepoInfo | None
    use_worktree: bool
    with_changes: bool
    resume: RunRecord | None
    notices: list[str] = field(default_factory=list)  # said first: which bot runs and why, skipped skills
    repo_layers: list[Layer | None] = field(default_factory=lambda: [None, None])  # read once (preflight)
    window: int | None = None  # the model's context window (Models API), None when unknown
    server_compaction: bool = False  # the API compacts the conversation itself (openbot's is the fallback)
    warnings: list[str] = field(default_factory=list)  # said when the run starts (a deprecated model…)
    verify: VerifySpec = VerifySpec((), 600, 3, False)  # how openbot checks the work (run/verify.py)
    work: WorkMode = WorkMode("tools", "")  # tool calls or edits in the reply (config/workmode.py)
    feedback: Feedback | None = None  # --feedback: the pull request's items, in `task` (run/feedback.py)


def plan_run(req: RunRequest) -> RunPlan:
    from openbot.run import preflight

    repo = find_repo(req.cwd)
    bot = find_bot(req.bot, repo.workdir if repo else None, req.bot_source)
    bot_file = bot.load()
    notices = [preflight.check_bot_trusted(bot, bot_file, repo, req.trust_repo_bots), *bot_file.notices]
    repo_layers, skipped = preflight.repo_layers(bot, repo, req.trust_repo_bots)
    config = resolve(bot_file.values, _flags(req), str(bot_file.path))
    _check_outside_a_repo(repo, req.cwd, config.skip_git_check)
    # A script named on the command line is the current directory's; one in config.md the bot's.
    model = resolve_script(config.model, req.cwd if req.model else bot_file.path.parent)
    backend, facts = _model(model, config, req.allow_unknown_price)
    backend = _chain(backend, config, bot_file.path.parent, req.allow_unknown_price)
    project, resume = _project_and_resume(req, bot)
    use_worktree = repo is not None and not req.no_worktree and (resume is None or resume.use_worktree)
    if use_worktree and repo is not None:
        _check_repo(repo, resume)
        preflight.check_lfs_objects(repo, resume)
    if resume is not None:
        notices.append(preflight.check_resumable(resume, req.resume == LAST))
    _check_sandbox(config, req.cwd)
    check_environment(config, str(bot_file.path), os.environ)  # an unset ${NAME} fails now, not mid-run
    memory, legacy = _memory(req, bot, project, resume)
    verify = preflight.verify_spec(bot_file, req.extra_flags, config, repo, use_worktree)
    return RunPlan(
        bot=bot,
        config=config,
        instructions=bot_file.instructions,
        task=req.prompt,
        cwd=req.cwd,
        model=model,
        backend=backend,
        memory=memory,
        redactor=Redactor.from_env(
            os.environ, also=[*secret_values(config, os.environ), *_model_key(config)]
        ),
        project=project,
        repo=repo,
        use_worktree=use_worktree,
        with_changes=req.with_changes,
        resume=resume,
        notices=[n for n in [*notices, *legacy, skipped] if n],
        repo_layers=repo_layers,
        window=facts.max_input_tokens if facts else None,
        server_compaction=bool(facts and server_trigger(config, facts.compaction_window)),
        warnings=_model_warnings(model, facts),
        verify=verify,
        work=choose(config, bot_file.values, facts.max_input_tokens if facts else None),
    )


def _memory(
    req: RunRequest, bot: BotRef, project: Project, resume: RunRecord | None
) -> tuple[MemoryStore, list[str]]:
    """The project's memory, checked readable; first the Rust openbot's directory-name state adopted (the
    one thing a plan moves, once every other check passed) and what is said about it."""
    from openbot.paths import memory_file
    from openbot.state.legacy_workspace import run_notices

    notices = run_notices(bot.name, project) if req.project is None and resume is None else []
    memory = MemoryStore(memory_file(bot.name, project.slug))
    memory.load()  # a damaged memory.json fails now, not mid-run
    return memory, notices


def _flags(req: RunRequest) -> dict[str, object]:
    """The command line's values for config keys (None: not given)."""
    return {
        "model": req.model,
        "max_iterations": req.max_iterations,
        "sleep_secs": req.sleep_secs,
        "sandbox": req.sandbox,
        "skip_git_check": req.skip_git_check,
        **req.extra_flags,
    }


def _check_outside_a_repo(repo: RepoInfo | None, cwd: Path, skip_git_check: bool) -> None:
    if repo is not None:
        return
    from openbot.run import preflight

    preflight.check_not_a_git_dir(cwd, skip_git_check)
    if not skip_git_check:
        raise UsageError(
            f"not inside a git repository: {cwd}",
            hint="cd into a repository, or pass --skip-git-check to work in this directory (no worktree)",
        )


def _model(
    model: str, config: BotConfig, allow_unknown_price: bool
) -> tuple[ModelBackend, ModelFacts | None]:
    """The backend with the config's knobs, and what the Models API (or the OpenAI-compatible server's
    model listing) says of the model (None: scripted). A bad script or a missing API key fails first; then
    an unknown or retired model (exit 2), and a cost limit that cannot be enforced (its price is unknown)."""
    name = parse_model(model)
    if name.backend == "scripted":
        return load_backend(name, config), None
    make_ready(name, config)  # a missing key or server URL fails here; the transport warms meanwhile
    from openbot.agent.models.params import options_from
    from openbot.agent.models.pricing import known_price

    if name.is_openai:
        from openbot.agent.models.openai import catalog as openai_catalog
        from openbot.agent.models.openai.endpoint import endpoint_for

        facts = openai_catalog.lookup(name, endpoint_for(name, config))
    else:
        facts = lookup(model)
    if config.max_cost_usd and not known_price(model) and not allow_unknown_price:
        raise UsageError(
            f"max_cost_usd = {config.max_cost_usd:g} cannot be enforced: no known price for {model!r}",
            hint="pass --allow-unknown-price to run with the cost unknown, or pick a priced model",
        )
    options = options_from(config, facts.max_tokens, facts.compaction_window)
    return load_backend(name, config, options, output_ceiling=facts.max_tokens), facts


def _chain(first: ModelBackend, config: BotConfig, bot_dir: Path, allow_unknown_price: bool) -> ModelBackend:
    rest = [
        _model(resolve_script(m, bot_dir), config, allow_unknown_price)[0] for m in config.fallback_models
    ]
    return fallback_chain([first, *rest])


def _model_key(config: BotConfig) -> list[str]:
    """The key `api_key_env` names, whatever its name looks like: hidden wherever it would appear."""
    return [os.environ[config.api_key_env]] if os.environ.get(config.api_key_env) else []


def _model_warnings(model: str, facts: ModelFacts | None) -> list[str]:
    from openbot.agent.models.pricing import known_price

    warnings = [facts.warning()] if facts is not None and facts.warning() else []
    if not known_price(model):
        warnings.append(f"no known price for model {model!r}: its cost is unknown and counted as $0")
    return warnings


def _project_and_resume(req: RunRequest, bot: BotRef) -> tuple[Project, RunRecord | None]:
    project = resolve_project(req.cwd, req.project)
    resume = find_run(bot.name, project.slug, req.resume) if req.resume is not None else None
    if resume is not None and req.project is None:
        project = Project(slug=resume.project, repo=project.repo)
    if resume is not None and req.no_worktree and resume.use_worktree:
        raise UsageError(
            f"run {resume.run_id} worked in a worktree; it resumes in one",
            hint="drop --no-worktree, or start a new run with it",
        )
    return project, resume


def _check_repo(repo: RepoInfo, resume: RunRecord | None) -> None:
    """An empty repository, or a resumed run whose branch is gone, is a usage error before anything exists."""
    from openbot.git import userrepo  # git, not pygit2: a run's start does without its import

    userrepo.keep()  # the run repository's creation reuses these reads (userrepo.keep says why)
    head = userrepo.head(repo.workdir)
    if resume is None and not head.commit:
        branch = head.ref.removeprefix("refs/heads/")
        if userrepo.any_branch(repo.workdir):
            raise UsageError(  # `git checkout --orphan`: the repository has commits, this branch has none
                f"your branch '{branch}' has no commits yet (an orphan branch); the bot's branch starts from"
                f" your HEAD, so there is nothing to start from in {repo.workdir}",
                hint="commit on it first, or switch to a branch with commits (git switch <branch>)",
            )
        raise UsageError(
            f"the repository at {repo.workdir} has no commits yet",
            hint="make a first commit; the bot's branch starts from your HEAD",
        )
    if (
        resume is not None
        and not resume.empty_branch_deleted
        and not userrepo.has_ref(repo.workdir, f"refs/heads/{resume.branch}")
        and not awaiting_home(repo.common_dir, resume.branch)
    ):
        why = "deleted by the run's discard action" if resume.action == "discard" else "no longer exists"
        raise UsageError(
            f"cannot resume run {resume.run_id}: its branch '{resume.branch}' {why}",
            hint=f"start a new run: openbot run {resume.bot}",
        )


def _check_sandbox(config: BotConfig, cwd: Path) -> None:
    """Fail before anything is created when the kernel cannot enforce the requested sandbox.

    The run's own policy is built when its worktree exists (`Workspace.open`): Landlock rules name
    existing paths, and the worktree's is chosen only as it is created."""
    from openbot.sandbox import policy_for_run

    policy_for_run(
        config.sandbox,
        worktree=cwd,
        common_dir=None,
        worktree_admin_dir=None,
        tmp_dir=Path(tempfile.gettempdir()),
        skills_dir=None,
        network=config.network is True,
        fallback=config.sandbox_fallback,
    )
