"""Tasks from a repository's own history (`openbot eval --from-history N`): redo your last N fixes.

A commit qualifies when it changed both tests and code. Its task starts at that commit with the code part
taken back (the files as they were at its parent; files it added removed) and its tests in place; the
prompt is its message; the check runs with the commit's own tests put back over whatever the bot left, so
a bot cannot pass by editing the tests.
"""

from __future__ import annotations

import shlex
from pathlib import Path, PurePosixPath

from openbot.git.gitcmd import run_git
from openbot.run.eval.suite import Limits, Task

TEST_DIRS = {"test", "tests", "testing", "spec", "specs", "__tests__"}
PROMPT = "Make this change to the code; the tests for it are already in place.\n\n{message}"


def is_test_path(path: str) -> bool:
    p = PurePosixPath(path)
    name = p.name
    in_test_dir = any(part in TEST_DIRS for part in p.parts[:-1])
    named = name.startswith("test_") or any(t in name for t in ("_test.", ".test.", "_spec.", ".spec."))
    return in_test_dir or named


def history_tasks(root: Path, count: int, check: str, limits: Limits, scan: int = 500) -> list[Task]:
    """The last `count` commits reachable from HEAD (of the newest `scan`) that changed code and tests."""
    shas = run_git(root, "log", "--no-merges", "--format=%H", f"-n{scan}", "HEAD").stdout.split()
    tasks: list[Task] = []
    for sha in shas:
        if len(tasks) == count:
            break
        task = _task(root, sha, check, limits)
        if task is not None:
            tasks.append(task)
    return tasks


def _task(root: Path, sha: str, check: str, limits: Limits) -> Task | None:
    parents = run_git(root, "rev-list", "--parents", "-n1", sha).stdout.split()[1:]
    if len(parents) != 1:
        return None
    changed = run_git(root, "diff", "--no-renames", "--name-only", "-z", parents[0], sha).stdout
    paths = [p for p in changed.split("\0") if p]
    tests = tuple(p for p in paths if is_test_path(p))
    code = tuple(p for p in paths if not is_test_path(p))
    if not tests or not code:
        return None
    message = run_git(root, "log", "-1", "--format=%B", sha).stdout.strip()
    subject = message.splitlines()[0] if message else sha[:12]
    return Task(
        name=f"{sha[:10]} {subject[:50]}",
        prompt=PROMPT.format(message=message),
        check=check.replace("{tests}", " ".join(shlex.quote(t) for t in tests)),
        limits=limits,
        repo=root,
        base=sha,
        revert=code,
        check_paths=tests,
    )
