"""The places one eval task works in: a fresh repository, a fresh OPENBOT_HOME, a clean checkout to check.

Nothing here touches the user's repository or OPENBOT_HOME beyond reading them: a task's repository is a
clone (or a recipe's new repository), the bot's config is copied (its workspaces — memory, history — are
not; no link is followed: homecopy.py), and the check runs in a clone of the run's result, never in the
bot's own checkout (check.py runs it inside the agent's walls).

Every git step here is plain git: no global or system config (`GIT_CONFIG_GLOBAL=/dev/null`,
`GIT_CONFIG_NOSYSTEM=1`), so no filter, no git-lfs and no other driver of the user's configuration runs on
what the bot committed (a filter named by a repository path would run the bot's own script, unconfined),
and `GIT_LFS_SKIP_SMUDGE=1` should git-lfs be reached anyway; hooks are off as for all of openbot's git.
LFS files are checked out as their pointers.
"""

from __future__ import annotations

from pathlib import Path

from openbot import gate, paths
from openbot.errors import NotFoundError, OpenbotError
from openbot.git import gitcmd
from openbot.run.eval.homecopy import copy_tree
from openbot.run.eval.suite import Task

BASE_BRANCH = "eval-base"
IDENTITY = ("-c", "user.name=openbot eval", "-c", "user.email=eval@localhost", "-c", "commit.gpgsign=false")
RECIPE_TIMEOUT = 600


class TaskSetupError(OpenbotError):
    """The task's repository could not be made: the task is reported as not run, the others go on."""


def plain_git_env() -> dict[str, str]:
    """openbot's git environment without the user's global or system configuration (see above)."""
    return {**gitcmd.git_env(), "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_LFS_SKIP_SMUDGE": "1"}


def run_git(cwd: Path, *args: str, check: bool = True) -> gate.CompletedProcess[str]:
    return gitcmd.run_git(cwd, *args, check=check, env=plain_git_env())


def make_home(bot: str, dest: Path) -> tuple[Path, list[str]]:
    """A fresh OPENBOT_HOME holding a copy of the user's bot (config, script, skills) and global skills;
    returns it and what the copy left out (links out of the directory, FIFOs, devices), each named."""
    source = paths.bot_home(bot)
    if not (source / "config.md").is_file():
        raise NotFoundError(
            f"no bot '{bot}' in {paths.bots_dir()}", hint="openbot eval runs a bot of your OPENBOT_HOME"
        )
    (dest / "bots").mkdir(parents=True)
    left_out = copy_tree(source, dest / "bots" / bot, skip_names=frozenset({"workspaces"}))
    left_out = [f"bots/{bot}/{x}" for x in left_out]
    if paths.global_skills_dir().is_dir():
        left_out += [f"skills/{x}" for x in copy_tree(paths.global_skills_dir(), dest / "skills")]
    return dest, left_out


def make_repo(task: Task, dest: Path) -> str:
    """The task's repository at `dest`, on branch eval-base; returns the commit the run starts from."""
    if task.repo is None:
        _recipe(task, dest)
    else:
        _clone_base(task, dest)
    if task.revert:
        _revert(dest, task.revert)
    return commit_of(dest, "HEAD")


def _recipe(task: Task, dest: Path) -> None:
    dest.mkdir(parents=True)
    run_git(dest, "init", "-q", "-b", BASE_BRANCH)
    for name, text in task.files.items():
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        (dest / name).write_text(text, encoding="utf-8")
    for command in task.commands:
        argv = ["bash", "-c", command]
        proc = gate.run(
            gate.EVAL_RECIPE, argv, cwd=dest, capture_output=True, text=True, timeout=RECIPE_TIMEOUT
        )
        if proc.returncode != 0:
            why = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["(no output)"]
            raise TaskSetupError(f"recipe command {command!r} exited {proc.returncode}: {why[0]}")
    run_git(dest, "add", "-A")
    run_git(dest, *IDENTITY, "commit", "-q", "--allow-empty", "-m", f"eval task {task.name}")


def _clone_base(task: Task, dest: Path) -> None:
    assert task.repo is not None
    if not task.repo.is_dir():
        raise TaskSetupError(f"repo {task.repo} is not a directory")
    base = commit_of(task.repo, task.base)
    run_git(task.repo.parent, "clone", "-q", "--no-hardlinks", "--no-checkout", str(task.repo), str(dest))
    run_git(dest, "checkout", "-q", "-B", BASE_BRANCH, base)
    # The run must not reach back into the user's repository through the clone's remote.
    run_git(dest, "remote", "remove", "origin")


def _revert(repo: Path, revert: tuple[str, ...]) -> None:
    """Put `revert` back as they were at HEAD^ (gone if they did not exist there), in one commit."""
    for path in revert:
        if exists_at(repo, "HEAD^", path):
            run_git(repo, "checkout", "-q", "HEAD^", "--", path)
        else:
            run_git(repo, "rm", "-q", "--ignore-unmatch", "--", path)
    run_git(repo, *IDENTITY, "commit", "-q", "--allow-empty", "-m", "eval: the change to redo, taken back")


def commit_of(repo: Path, rev: str) -> str:
    try:
        return run_git(repo, "rev-parse", "--verify", "--end-of-options", f"{rev}^{{commit}}").stdout.strip()
    except OpenbotError as e:
        raise TaskSetupError(f"{rev!r} is not a commit in {repo}") from e


def exists_at(repo: Path, rev: str, path: str) -> bool:
    proc = run_git(repo, "cat-file", "-e", f"{rev}:{path}", check=False)
    return proc.returncode == 0


def result_commit(repo: Path, branch: str) -> tuple[str, str]:
    """What the run left to check: its branch's tip, or — no branch (nothing committed, merged, discarded)
    — the base branch's tip. Returns (commit, which)."""
    if branch:
        proc = run_git(repo, "rev-parse", "--verify", "-q", f"refs/heads/{branch}", check=False)
        if proc.returncode == 0:
            return proc.stdout.strip(), branch
    return commit_of(repo, f"refs/heads/{BASE_BRANCH}"), BASE_BRANCH


def check_out(repo: Path, commit: str, dest: Path, git_dir: Path, task: Task, base: str) -> None:
    """A clean clone of `repo` at `commit` in `dest` (its git dir `git_dir`, beside it), a history task's
    own tests put back."""
    clone = ("clone", "-q", "--no-hardlinks", "--no-checkout", f"--separate-git-dir={git_dir}")
    run_git(repo.parent, *clone, str(repo), str(dest))
    run_git(dest, "checkout", "-q", "--detach", commit)
    for path in task.check_paths:
        original = f"{base}^"  # the commit whose tests judge the result (the revert commit's parent)
        if exists_at(dest, original, path):
            run_git(dest, "checkout", "-q", original, "--", path)
        elif (dest / path).exists():
            run_git(dest, "rm", "-q", "-f", "--", path)
