"""What a checkout says of itself, read without pygit2: its branch, its commit, whether it has a commit
identity (an agent committing in CI, where none is configured, gets openbot's)."""

from __future__ import annotations

from pathlib import Path

from openbot import gate


def git_identity_env(workdir: Path, bot: str) -> dict[str, str]:
    """Commit identity for the agent when the repository has none configured (common in CI)."""
    try:
        out = gate.run(
            gate.GIT_READ,
            ["git", "config", "--get", "user.name"],
            cwd=workdir,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, gate.TimeoutExpired):
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
