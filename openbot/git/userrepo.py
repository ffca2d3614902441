"""The user's repository as a run's start reads it, through git rather than pygit2 (whose import alone is
~55 ms of CPU, a fifth of a run's launch → first request): HEAD, whether a branch exists, and the
configuration as libgit2 reads it.

`config` is `git config --list -z` with the system file included — libgit2 reads it, while openbot's own
git calls leave it out (gitcmd.git_env) — in the order libgit2 iterates too (system, global, local; a
later entry wins), each name as both spell it (section and key in lower case). A key without a value
is None, as pygit2 gives it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from openbot import gate
from openbot.errors import GitError
from openbot.git.gitcmd import first_line, git_env, run_bounded, run_git

ConfigEntries = list[tuple[str, str | None]]

# A run's start reads HEAD and the configuration twice: in the plan (run/plan.py, preflight's LFS check)
# and again moments later creating the run repository (git/runrepo.py). openbot changes neither in
# between: it writes only the run's own git dir, and the sweep of dead runs (which runs in between) writes
# only their branches. `keep` holds the first answers for that span, sparing two git processes before the
# first model request (issue 22); `forget` ends it once the run's repository exists, so every later read
# (verification, submodules, the end of a run, hours on) sees the user's repository as it is then.
_kept: dict[tuple[str, Path, bool], object] | None = None


def keep() -> None:
    """Answer HEAD and config reads from the first read, until `forget` (a fresh span each call)."""
    global _kept
    _kept = {}


def forget() -> None:
    global _kept
    _kept = None


@dataclass(frozen=True)
class Head:
    commit: str  # the commit HEAD resolves to; "" when unborn (a repository or orphan branch with none)
    ref: str  # the branch HEAD names (`refs/heads/<name>`, unborn too); "" when detached


def head(workdir: Path) -> Head:
    """HEAD of the checkout; a repository git cannot read is a GitError, never taken for an unborn HEAD."""
    if _kept is None:
        return _head(workdir)
    found = _kept.get(("head", workdir, False))
    if not isinstance(found, Head):
        found = _kept[("head", workdir, False)] = _head(workdir)
    return found


def _head(workdir: Path) -> Head:
    # One git for the usual case (a commit, on a branch or detached); an unborn HEAD fails it.
    both = run_git(workdir, "rev-parse", "HEAD^{commit}", "--symbolic-full-name", "HEAD", check=False)
    lines = both.stdout.split()
    if both.returncode == 0 and len(lines) == 2 and re.fullmatch(r"[0-9a-f]{40,64}", lines[0]):
        if lines[1] == "HEAD" or lines[1].startswith("refs/"):
            return Head(lines[0], "" if lines[1] == "HEAD" else lines[1])
    ref = run_git(workdir, "symbolic-ref", "-q", "HEAD", check=False)
    rev = run_git(workdir, "rev-parse", "-q", "--verify", "HEAD^{commit}", check=False)
    for proc in (ref, rev):  # 1: detached, or unborn (quietly); anything else is git refusing
        if proc.returncode not in (0, 1):
            raise GitError(f"cannot read HEAD in {workdir}: {first_line(proc.stderr or proc.stdout)}")
    return Head(
        rev.stdout.strip() if rev.returncode == 0 else "", ref.stdout.strip() if ref.returncode == 0 else ""
    )


def has_ref(workdir: Path, name: str) -> bool:
    """Whether the full ref `name` exists (an invalid name does not)."""
    return run_git(workdir, "show-ref", "--verify", "-q", name, check=False).returncode == 0


def any_branch(workdir: Path) -> bool:
    return bool(
        run_git(workdir, "for-each-ref", "--count=1", "--format=%(refname)", "refs/heads/").stdout.strip()
    )


def config(where: Path, *, git_dir: bool = False) -> ConfigEntries:
    """Every configuration entry of the checkout `where` (or of the git dir `where`, its own config file
    without a worktree's), system file included."""
    if _kept is None:
        return _config(where, git_dir)
    found = _kept.get(("config", where, git_dir))
    if not isinstance(found, list):
        found = _kept[("config", where, git_dir)] = _config(where, git_dir)
    return list(found)  # a copy: a caller's change never reaches the next reader


def _config(where: Path, git_dir: bool) -> ConfigEntries:
    env = git_env()
    env.pop("GIT_CONFIG_NOSYSTEM", None)  # as libgit2 reads it
    argv = ["git", *([f"--git-dir={where}"] if git_dir else []), "config", "--list", "-z"]
    proc = run_bounded(argv, cwd=where, env=env, what="git config --list", step=gate.GIT_READ)
    if proc.returncode != 0:
        why = first_line(proc.stderr.decode(errors="replace"))
        raise GitError(f"cannot read the git configuration of {where}: {why}")
    entries: ConfigEntries = []
    for item in proc.stdout.decode(errors="replace").split("\0"):
        if item:
            name, has_value, value = item.partition("\n")
            entries.append((name, value if has_value else None))
    return entries


def get(entries: ConfigEntries, key: str) -> str | None:
    """`key`'s value as pygit2's `config[key]` reads it (the last entry wins; a key without a value reads
    as "None", as `str()` of pygit2's answer did); None when the key is not set."""
    found = [value for name, value in entries if name == key]
    return str(found[-1]) if found else None
