"""What a checkout is in the middle of: the user's, said once at the start of a run (the bot starts from
the user's last commit: uncommitted changes and a half-done rebase or merge are not part of it — right,
but surprising when unsaid); the agent's, looked at before its work is checked (`status_look`).
"""

from __future__ import annotations

import shutil

from openbot import gate
from openbot.git.repo import RepoInfo

# Files git leaves in a checkout's git dir while an operation waits for the user.
_IN_PROGRESS = (
    ("rebase-merge", "a rebase"),
    ("rebase-apply", "a rebase"),
    ("MERGE_HEAD", "a merge"),
    ("CHERRY_PICK_HEAD", "a cherry-pick"),
    ("REVERT_HEAD", "a revert"),
    ("BISECT_LOG", "a bisect"),
)


def operation_in_progress(repo: RepoInfo) -> str:
    """'a rebase', 'a merge', ... when the checkout is mid-operation, else ''."""
    for name, what in _IN_PROGRESS:
        if (repo.git_dir / name).exists():
            return what
    return ""


def has_uncommitted_changes(repo: RepoInfo) -> bool:
    """Tracked files differ from HEAD (untracked files are not counted: build output is common)."""
    try:
        out = gate.run(
            gate.GIT_READ,
            ["git", "status", "--porcelain", "--untracked-files=no", "--ignore-submodules=dirty"],
            cwd=repo.workdir,
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, gate.TimeoutExpired):
        return False  # a notice only: never a reason to fail the run
    return out.returncode == 0 and bool(out.stdout.strip())


def checkout_notices(repo: RepoInfo, with_changes: bool) -> list[str]:
    """One line per surprise: what of the checkout the bot's branch does not start from."""
    notices = []
    operation = operation_in_progress(repo)
    if operation:
        notices.append(
            f"· {operation} is in progress in your checkout: the bot starts from its current HEAD commit,"
            " not from the result"
        )
    if not with_changes and has_uncommitted_changes(repo):
        notices.append(
            "· your checkout has uncommitted changes: the bot starts from your last commit without them"
            " (--with-changes carries them into its worktree)"
        )
    return notices


LOOK_SECS = 5
UNTRACKED_UNKNOWN = f"(untracked files not listed: git status did not answer in {LOOK_SECS} s)"


def status_look() -> list[str]:
    """`git status --porcelain` in the agent's checkout, as a command for its walls: bounded, then without
    the untracked files. Listing those reads every directory's `.gitignore`, and a FIFO the agent named so
    blocks git's read until a writer comes (it cost every completion 60 s); without them git reads none.
    git and timeout are openbot's, not ones the agent put first on its PATH (.venv/bin)."""
    git = [shutil.which("git") or "git", "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null"]
    script = (
        f't=$1; shift; "$t" -k 1 {LOOK_SECS} "$@" 2>/dev/null'
        ' || { "$@" --untracked-files=no 2>/dev/null && echo "$0"; }'
    )
    timeout = shutil.which("timeout") or "timeout"
    return ["/bin/sh", "-c", script, UNTRACKED_UNKNOWN, timeout, *git, "status", "--porcelain"]
