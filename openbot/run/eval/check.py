"""A task's check, run inside the agent's walls: it runs the bot's committed code (the tests import it).

The walls are the bot's own sandbox, built the way verification builds them for its clean checkout
(run/verify.py): bubblewrap and Landlock, writable only the check's clone (its checkout and the git dir
beside it) and its temp dir, a fresh private $HOME and $TMPDIR, no network. Its environment is the
agent's allowlist (envpolicy.child_env: PATH, HOME, LANG … and the bot's `env_passthrough`) less every
secret-looking name; a model key is never in it. The mode follows the bot's config — `workspace-write`
unless the bot runs `danger-full-access`, the user's explicit choice — and so does `sandbox_fallback`: where
the machine cannot build the walls, eval refuses before the first task (exit 2), as `openbot run` does.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from openbot import gate
from openbot.envpolicy import child_env, is_secret_name
from openbot.errors import OpenbotError, SandboxError
from openbot.sandbox import SandboxPolicy, policy_for_run

TAIL = 2000  # characters of the check's output kept for the report
READ_GRACE = 10.0  # seconds to read what is left in the pipe once the check's processes are killed


@dataclass(frozen=True)
class Walls:
    """The sandbox settings of the bot whose work is checked."""

    mode: str = "workspace-write"
    fallback: str = "error"
    passthrough: tuple[str, ...] = ()


def walls_of(bot: str) -> Walls:
    """The bot's sandbox settings from its config in OPENBOT_HOME; the defaults when it cannot be read
    (its run then fails and says why, and the check runs in the strictest walls)."""
    from openbot.config.bots import find_bot

    try:
        config = find_bot(bot, None, "home").load().config
    except OpenbotError:
        return Walls()
    mode = "danger-full-access" if config.sandbox == "danger-full-access" else "workspace-write"
    return Walls(mode, config.sandbox_fallback, tuple(config.env_passthrough))


def policy(walls: Walls, checkout: Path, git_dir: Path | None, tmp: Path) -> SandboxPolicy:
    """The check's sandbox; SandboxError (exit 2) when the machine cannot build it and the bot does not
    say `sandbox_fallback = "warn"`."""
    try:
        return policy_for_run(
            walls.mode, worktree=checkout, common_dir=None, worktree_admin_dir=git_dir, tmp_dir=tmp,
            skills_dir=None, network=False, fallback=walls.fallback,
        )  # fmt: skip
    except SandboxError as e:
        why = f"openbot eval runs each task's check in the bot's sandbox: {e.message}"
        raise SandboxError(why, hint=e.hint) from None


def probe(walls: Walls, where: Path) -> str:
    """Fail now, before any task runs, when the checks could not be confined; the fallback's warning
    (or "") when they can only partly be."""
    (where / "checkout").mkdir(parents=True)
    return policy(walls, where / "checkout", None, where / "tmp").unconfined_warning


def run_check(
    command: str, walls: Walls, checkout: Path, git_dir: Path, tmp: Path, timeout: float
) -> tuple[int | None, str]:
    """The check's exit code (None: it timed out) and the tail of its output."""
    sandbox = policy(walls, checkout, git_dir, tmp)
    env = {
        **{k: v for k, v in child_env(os.environ, walls.passthrough).items() if not is_secret_name(k)},
        **sandbox.env(),
    }
    proc = gate.popen(
        gate.EVAL_CHECK, sandbox.wrap(["bash", "-c", command]), env=env, cwd=checkout,
        stdin=gate.DEVNULL, stdout=gate.PIPE, stderr=gate.STDOUT, start_new_session=True,
    )  # fmt: skip
    tail = [b""]
    assert proc.stdout is not None
    reader = threading.Thread(target=_keep_tail, args=(proc.stdout, tail), daemon=True)
    reader.start()
    try:
        code: int | None = proc.wait(timeout=timeout)
    except gate.TimeoutExpired:
        code = None
    finally:
        _stop(proc)
    reader.join(timeout=READ_GRACE)  # a process that left the check's group may hold the pipe open
    out = tail[0].decode(errors="replace")
    if code is None:
        out += f"\n(check timed out after {timeout:.0f} s)"
    return code, out[-TAIL:]


def _keep_tail(stream: IO[bytes], tail: list[bytes]) -> None:
    """Read the check's output to its end, keeping only its last bytes: a check that prints without end
    costs no memory."""
    with stream:
        while chunk := os.read(stream.fileno(), 1 << 16):
            tail[0] = (tail[0] + chunk)[-TAIL * 4 :]


def _stop(proc: gate.Popen[bytes]) -> None:
    """Nothing the check started outlives it (the sandbox's PID namespace already sees to that; the
    Landlock-only fallback has none)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
