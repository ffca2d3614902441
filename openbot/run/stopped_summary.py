"""The summary of a session or run that did not complete: what stopped it and what was done, in figures.

The model's last sentence ("I will now run the whole test suite…") is what it meant to do next, not what
happened; for a run stopped by a limit, a signal, a failure or a refusal, history, notifications, the HTML
export and the CI summary get this instead. A completed session keeps what the bot said.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from openbot.state.runstate import RunRecord
from openbot.views.escapes import shorten

STOPPED = {
    "limit": "stopped by a limit",
    "interrupted": "interrupted",
    "failed": "failed",
    "refused": "the model refused",
    "unverified": "not verified",
    "unreviewed": "not approved by its review",
    "over_budget": "stopped by the budget ledger",
}


def stopped(status: str, reason: str) -> str:
    """`stopped by the budget ledger: the daily cap …`: the status said once, where the reason says it
    again ("budget ledger: …", "not verified after …")."""
    label = STOPPED.get(status, status)
    if not reason:
        return label
    for echo in (label, label.removeprefix("stopped by the ")):
        if reason.lower().startswith(echo.lower()):
            return label + reason[len(echo) :]
    return f"{label}: {reason}"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def session_summary(status: str, reason: str, events: Iterable[Mapping[str, Any]]) -> str:
    """What stopped the session, and the commands and edits it made (from its own events)."""
    commands, edited = [], []
    for e in events:
        if e.get("type") == "command":
            commands.append(shorten(str(e.get("command", "")), 80))
        elif e.get("type") == "tool_call" and e.get("name") == "edit":
            path = str((e.get("input") or {}).get("path", ""))
            if path and path not in edited:
                edited.append(path)
    said = stopped(status, reason)
    did = _plural(len(commands), "command") + (f" (the last: {commands[-1]})" if commands else "")
    if edited:
        did += f"; edited {', '.join(edited[:5])}" + (
            f" and {len(edited) - 5} more" if len(edited) > 5 else ""
        )
    return f"{said}. Did: {did}."


def run_summary(rec: RunRecord, repo: Path | None) -> str:
    """What stopped the run, then its commits on the branch (files, lines), its WIP commit and commands."""
    said = stopped(rec.status, rec.reason)
    work = [_commits(repo, rec.base_commit, rec.branch)] if repo is not None else []
    if rec.wip_commits:
        work.append(f"uncommitted work saved as WIP commit {rec.wip_commits[-1][:12]}")
    work.append(_plural(rec.command_count, "command"))
    return f"{said}. Did: {'; '.join(w for w in work if w)}."


def _commits(repo: Path, base: str, branch: str) -> str:
    """`3 commits on <branch> (4 files, +120 -8)`, read from the user's repository (the branch is home and
    verified by then; libgit2 runs no diff driver); "" when it cannot be read."""
    import pygit2

    try:
        git = pygit2.Repository(str(repo))
        ref = git.branches.local.get(branch) if branch else None
        if ref is None or not base:
            return ""
        tip = ref.peel(pygit2.Commit)
        walker = git.walk(tip.id, pygit2.enums.SortMode.TOPOLOGICAL)
        walker.hide(pygit2.Oid(hex=base))
        n = sum(1 for _ in walker)
        if n == 0:
            return f"no commits on {branch}"
        stats = git.diff(git.revparse_single(base).peel(pygit2.Commit), tip).stats
    except (pygit2.GitError, KeyError, ValueError):
        return ""
    lines = f"+{stats.insertions} -{stats.deletions}"
    return f"{_plural(n, 'commit')} on {branch} ({_plural(stats.files_changed, 'file')}, {lines})"
