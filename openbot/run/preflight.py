"""Checks `plan_run` makes before anything exists, about things a repository or a previous run left behind:
a committed bot the user has not trusted, a directory that is (or holds) a git dir the agent would get to
write, and a saved conversation that a resume could not use. Each failure is one line, exit 2.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from openbot.errors import UsageError

if TYPE_CHECKING:
    from openbot.config.botconfig import BotConfig, BotFile
    from openbot.config.bots import BotRef
    from openbot.config.skills import Layer
    from openbot.config.verify import VerifySpec
    from openbot.git.repo import RepoInfo
    from openbot.state.runstate import RunRecord

MAX_SCAN_DIRS = 20_000  # a --skip-git-check directory larger than this is refused rather than half-checked


def repo_identity(repo: RepoInfo) -> str:
    """What trust is keyed by: the repository's identity (its origin url, else its git dir), never
    `--project`, which names only where memory and history go."""
    from openbot.state.project import resolve_project

    return resolve_project(repo.workdir).identity


def check_bot_trusted(bot: BotRef, bot_file: BotFile, repo: RepoInfo | None, explicit: bool) -> str:
    """The first line of a run: which bot runs and why. A committed bot runs only when trusted."""
    from openbot.state import trust

    other = f"; your home bot of that name is at {bot.other}" if bot.other else ""
    if bot.source == "home":
        if bot.other is None:
            return ""
        return (
            f"· using your bot '{bot.name}' ({bot.config_path}); this repository also commits one at "
            f"{bot.other}, which runs only with --bot-source repo"
        )
    assert repo is not None  # a committed bot comes from a repository
    wants, explicit = trust.asks(bot_file.values), explicit or trust.env_trusts()
    why = trust.require_trusted_bot(repo.workdir, repo_identity(repo), bot.name, wants, explicit)
    return f"· using the bot committed in this repository ({bot.config_path}), {why}{other}"


def repo_skills_allowed(repo: RepoInfo | None, explicit: bool) -> tuple[bool, str]:
    """Whether the repository's `.openbot/skills/` may reach this run's prompt (only once trusted)."""
    from openbot.state import trust

    if repo is None:
        return False, ""
    explicit = explicit or trust.env_trusts()
    return trust.repo_skills_allowed(repo.workdir, lambda: repo_identity(repo), explicit)


def repo_layers(bot: BotRef, repo: RepoInfo | None, explicit: bool) -> tuple[list[Layer | None], str]:
    """The repository's skill layers this run gets, read now from the user's checkout, where trust has just
    hashed them (the run's own checkout may hold other ones: HEAD's tree, the agent's branch), and the
    line that says the repository's skills were skipped, if they were."""
    from openbot.config.skills import repo_layers as read_layers

    allowed, skipped = repo_skills_allowed(repo, explicit)
    root = repo.workdir if repo is not None else None
    return read_layers(bot.name, root, repo_skills=allowed, committed=bot.source == "repo"), skipped


def is_git_dir(path: Path) -> bool:
    """git's own test: HEAD, objects/ and refs/ (a bare repository, or the inside of a `.git`)."""
    return (path / "HEAD").is_file() and (path / "objects").is_dir() and (path / "refs").is_dir()


def check_not_a_git_dir(cwd: Path, skip_git_check: bool) -> None:
    """Outside a checkout: refuse a directory that is, is inside, or (with --skip-git-check) holds a git
    dir — the agent would get to write its hooks and config, which git runs and trusts outside any sandbox."""
    here = cwd.resolve()
    for d in (here, *here.parents):
        if is_git_dir(d):
            raise UsageError(
                f"{d} is a bare repository (or a git dir); openbot works in a checkout of it",
                hint=f"clone it and run there: git clone {d} <dir>",
            )
    if not skip_git_check:
        return
    found = _git_dir_under(here)
    if found is not None:
        raise UsageError(
            f"--skip-git-check in {here}, which holds a git repository at {found}: the agent could write "
            "its hooks and config",
            hint="run inside that repository instead (openbot then works on a branch of its own)",
        )


def _git_dir_under(root: Path) -> Path | None:
    scanned = 0
    for d, dirs, _ in os.walk(root):  # symlinks are not followed
        here = Path(d)
        if ".git" in dirs or (here / ".git").is_file() or is_git_dir(here):
            return here / ".git" if (here / ".git").exists() else here
        scanned += 1
        if scanned > MAX_SCAN_DIRS:
            raise UsageError(
                f"--skip-git-check in {root}: more than {MAX_SCAN_DIRS} directories to check for git dirs",
                hint="run in a smaller directory",
            )
    return None


def check_conversation(path: Path) -> None:
    """A resumed run's conversation must load: a damaged one is refused now, never replaced."""
    from openbot.state.conversation import check_file

    check_file(path)


def check_lfs_objects(repo: RepoInfo, resume: RunRecord | None) -> None:
    """A clone lacking LFS objects of the commit the bot starts from is refused before anything exists."""
    from openbot.git import lfs
    from openbot.git.gitcmd import run_git

    start = "HEAD"
    if resume is not None:
        has = run_git(
            repo.workdir,
            "rev-parse",
            "--verify",
            "-q",
            "refs/heads/" + resume.branch.removeprefix("refs/heads/"),
            check=False,
        )
        start = has.stdout.strip() if has.returncode == 0 else resume.base_commit or "HEAD"
    lfs.check_objects(repo.common_dir, repo.workdir, start)


def verify_spec(
    bot_file: BotFile,
    flags: Mapping[str, object],
    config: BotConfig,
    repo: RepoInfo | None,
    use_worktree: bool,
) -> VerifySpec:
    """The run's verification (checked: check_verify); where the bot's config.md (and the command line)
    set no `verify`, the repository's evident test command, read from the user's checkout as it starts."""
    from openbot.config.verify import spec_for

    declared = "verify" in bot_file.values or "verify" in flags
    root = repo.workdir if repo is not None and use_worktree else None
    return check_verify(spec_for(config, root, declared), use_worktree)


def check_verify(spec: VerifySpec, use_worktree: bool) -> VerifySpec:
    """Verification checks out the run's branch: a run without its own repository has none to check."""
    if spec.commands and not use_worktree:
        where = "the bot's verify" if len(spec.commands) > len(spec.team) else "$OPENBOT_HOME/verify.toml"
        raise UsageError(
            f"{where} needs the run's own branch to check, and this run has none (--no-worktree or no "
            "repository)",
            hint="run it in a repository without --no-worktree, or remove the verify commands",
        )
    return spec


def check_resumable(rec: RunRecord, found_as_last: bool) -> str:
    """Refuse to resume a run whose process is still alive on this machine, or one whose conversation is
    damaged; the line that says which run resumes when the user gave no id."""
    if rec.pid == os.getpid() or not rec.process_alive():
        # finished, or died without finishing (resuming it is what the user wants), or elsewhere
        check_conversation(rec.conversation_path)
        said = f"resuming the last run {rec.run_id} ({rec.status}, started {rec.created_at})"
        return said if found_as_last else ""
    raise UsageError(
        f"run {rec.run_id} is still running (pid {rec.pid})",
        hint=f"stop it first (kill -INT {rec.pid}), then resume it",
    )
