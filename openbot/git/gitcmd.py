"""How openbot runs git itself: a clean environment, no hooks, one-line errors; and deleting trees.

Every git command openbot runs on the user's repository goes through `run_git`, which turns hooks off
(`core.hooksPath=/dev/null`, so neither `.git/hooks` nor an in-tree `.githooks` ever runs), ignores the
system config, strips GIT_DIR & co. inherited from a hook and never passes model secrets.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pygit2

import contextlib
import os
import shutil
import signal
import stat
import threading
from pathlib import Path

from openbot import gate
from openbot.envpolicy import NEVER, is_secret_name
from openbot.errors import GitError

FALLBACK_NAME, FALLBACK_EMAIL = "openbot", "openbot@localhost"
# Command-line config beats every config file and reaches the git processes git itself starts
# (upload-pack on a fetch), through GIT_CONFIG_PARAMETERS.
NO_HOOKS = ("-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false")
# Every git step openbot runs is bounded: the agent can make git's reads block (a FIFO), never forever.
GIT_TIMEOUT = 900.0
_REPO_ENV: tuple[str, ...] = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_CONFIG")
_REPO_ENV += ("GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_QUARANTINE_PATH")


def git_env() -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in _REPO_ENV and not k.startswith("GIT_CONFIG_") and k not in NEVER and not is_secret_name(k)
    }
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    env["GIT_NO_LAZY_FETCH"] = "1"  # git ≥ 2.44: no promisor fetch a repository's config could ask for
    env["GIT_TERMINAL_PROMPT"] = "0"
    return env


def run_git(
    cwd: Path, *args: str, check: bool = True, timeout: float = GIT_TIMEOUT, env: dict[str, str] | None = None
) -> gate.CompletedProcess[str]:
    """Run git (hooks off) in `cwd`, in `env` (default `git_env()`); failures become one-line GitErrors.

    git runs in its own session: a Ctrl-C at the terminal reaches openbot alone, which decides when to
    stop, instead of killing a `git merge` half-way through updating the user's files.
    """
    proc = run_bounded(["git", *NO_HOOKS, *args], cwd=cwd, timeout=timeout, what=f"git {_sub(args)}", env=env)
    out = gate.CompletedProcess(
        proc.args, proc.returncode, proc.stdout.decode(errors="replace"), proc.stderr.decode(errors="replace")
    )
    if check and out.returncode != 0:
        raise GitError(f"git {_sub(args)} failed in {cwd}: {first_line(out.stderr or out.stdout)}")
    return out


def git_bytes(git_dir: Path, *args: str, stdin: bytes = b"", cwd: Path | None = None) -> bytes:
    """git on the git dir `git_dir` (or in the checkout `cwd`), hooks off, bytes in and out: for output
    holding file names, which need not be UTF-8. Failures become one-line GitErrors."""
    where = [] if cwd is not None else [f"--git-dir={git_dir}"]
    proc = run_bounded(
        ["git", *NO_HOOKS, *where, *args], cwd=cwd or git_dir, stdin=stdin, what=f"git {_sub(args)}"
    )
    if proc.returncode != 0:
        why = first_line(proc.stderr.decode(errors="replace"))
        raise GitError(f"git {_sub(args)} failed in {cwd or git_dir}: {why}")
    return proc.stdout


def run_bounded(
    argv: list[str],
    *,
    cwd: Path,
    stdin: bytes = b"",
    timeout: float = GIT_TIMEOUT,
    what: str = "git",
    env: dict[str, str] | None = None,
    step: gate.Step = gate.GIT,
) -> gate.CompletedProcess[bytes]:
    """Run `argv` in a session of its own, outside any sandbox, for at most `timeout` seconds. Whatever
    ends the wait — the timeout, a signal turned into an exception — kills its whole process group, so
    no git, git-lfs or filter is left behind blocked on something the agent planted."""
    try:
        proc = gate.popen(
            step,
            argv,
            cwd=cwd,
            env=git_env() if env is None else env,
            stdin=gate.PIPE,
            stdout=gate.PIPE,
            stderr=gate.PIPE,
            start_new_session=True,
        )
    except OSError as e:
        raise GitError(f"{what} could not start in {cwd}: {e}") from e
    try:
        out, err = proc.communicate(stdin, timeout=timeout)
    except BaseException as e:
        _kill_group(proc)
        if isinstance(e, gate.TimeoutExpired):
            raise GitError(f"{what} in {cwd} did not finish within {timeout:.0f} s (stopped)") from e
        raise
    return gate.CompletedProcess(argv, proc.returncode, out, err)


def _kill_group(proc: gate.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()


def _sub(args: tuple[str, ...]) -> str:
    """The subcommand, past `-c k=v` and `--git-dir=…` options."""
    skip = False
    for a in args:
        if skip:
            skip = False
        elif a == "-c":
            skip = True
        elif not a.startswith("-"):
            return a
    return ""


def first_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    # git prints "Preparing worktree…" before the real error; the last "fatal:"/"error:" line says why.
    for ln in reversed(lines):
        if ln.startswith(("fatal:", "error:")):
            return ln
    return lines[0] if lines else "(no output)"


_WARMING: list[threading.Thread] = []
# What a run's end imports: pygit2 (the WIP commit), its homecoming, the action applied after it.
END_MODULES = ("pygit2", "openbot.git.home", "openbot.git.hookfiles", "openbot.git.actions")


def warm_end() -> None:
    """Import the end's modules on a thread of its own, once: pygit2 (50-150 ms) and openbot's own
    (~5 ms idle, more under load, after the model's last word). A run's start does without them, and in
    between the run mostly waits on the model."""
    if _WARMING:
        return
    thread = threading.Thread(target=_import_end, name="openbot-warm-end", daemon=True)
    _WARMING.append(thread)
    thread.start()


def _import_end() -> None:
    import importlib

    for name in END_MODULES:
        importlib.import_module(name)


def end_warmed() -> None:
    """Wait for `warm_end`'s imports when they started: the end then imports none of them itself (a
    model that answered at once left them unfinished; a failed one is the end's own to raise)."""
    for thread in _WARMING:
        thread.join()


def open_repo(path: Path) -> pygit2.Repository:
    import pygit2

    try:
        return pygit2.Repository(str(path))
    except pygit2.GitError as e:
        raise GitError(f"cannot open git repository at {path}: {str(e).splitlines()[0]}") from e


def signature(repo: pygit2.Repository) -> pygit2.Signature:
    """The repository's configured user, or a recognisable openbot identity when none is configured."""
    import pygit2

    try:
        return repo.default_signature
    except (KeyError, pygit2.GitError):
        return pygit2.Signature(FALLBACK_NAME, FALLBACK_EMAIL)


def rmtree(path: Path | None) -> None:
    """Delete a tree even where a bot left read-only directories; a symlink is removed, never followed."""
    if path is None or not (path.exists() or path.is_symlink()):
        return
    if path.is_symlink() or not path.is_dir():
        path.unlink()
        return
    try:
        shutil.rmtree(path)
    except OSError:
        for d, _, _ in os.walk(path):
            with contextlib.suppress(OSError):  # another sweep may be deleting the same trash
                os.chmod(d, os.stat(d).st_mode | stat.S_IRWXU)
        shutil.rmtree(path, ignore_errors=True)
