"""The one gate every process openbot starts goes through.

Each process belongs to a named `Step` that says where its code and configuration come from (openbot
itself, the user's own configuration, the run's base commit, the agent's tree) and what it gets (inside
the agent's walls or beside them, network, secrets). The rule the steps are checked against when this
module is imported: a step whose code or configuration can come from the agent's tree runs inside the
agent's walls — sandboxed, no secrets, no open network. At run time `run`/`popen`/`spawn_detached`/`exec`
refuse a sandboxed step whose argv was not made by the sandbox (`Confined`), and every environment loses
the model keys unless the step is openbot's own child that needs them (an `openbot run` it starts).

docs/SANDBOX.md's table of steps is `table()` (tests/test_gate.py compares them; scripts/render_steps.py
rewrites it); tests/test_process_starts.py fails on any process start (`subprocess`, `os.exec*`,
`os.posix_spawn*`, the mcp SDK's `stdio_client`, …) or `import subprocess` outside this module. A library
that starts its process itself gets its argv and environment from here (`stdio_server`).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, TextIO

# The vocabulary and the register of steps live in gateterms.py; callers name them through the gate
# (gate.From, gate.Confined, gate.steps(), …), and steps are declared only in the list below.
from openbot.gateterms import Confined as Confined
from openbot.gateterms import From as From
from openbot.gateterms import GateError as GateError
from openbot.gateterms import Net as Net
from openbot.gateterms import Secrets as Secrets
from openbot.gateterms import Step as Step
from openbot.gateterms import Walls as Walls
from openbot.gateterms import clean_env as clean_env
from openbot.gateterms import is_declared, own_python_reading_cwd
from openbot.gateterms import step as step
from openbot.gateterms import steps as steps
from openbot.gateterms import table as table


def _checked(step_: Step, argv: Sequence[str]) -> list[str]:
    if not is_declared(step_):
        raise GateError(f"gate: step {step_.name} was never declared")
    if step_.walls is Walls.SANDBOX and not isinstance(argv, Confined):
        raise GateError(f"gate: step {step_.name} runs inside the walls, but its argv was not confined")
    if step_.walls is Walls.BESIDE and own_python_reading_cwd(argv):
        raise GateError(f"gate: step {step_.name} starts openbot's Python without -P or -I")
    return list(argv)


def run(
    step_: Step,
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    named: Sequence[str] = (),
    **kwargs: Any,
) -> subprocess.CompletedProcess[Any]:
    """`subprocess.run` for `step_` (same keyword arguments)."""
    return subprocess.run(_checked(step_, argv), env=clean_env(step_, env, named), **kwargs)


def popen(
    step_: Step,
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    named: Sequence[str] = (),
    **kwargs: Any,
) -> subprocess.Popen[Any]:
    """`subprocess.Popen` for `step_` (same keyword arguments)."""
    return subprocess.Popen(_checked(step_, argv), env=clean_env(step_, env, named), **kwargs)


def spawn_detached(step_: Step, argv: Sequence[str], *, env: Mapping[str, str] | None = None) -> int:
    """A process openbot does not wait for (its own session, stdio on /dev/null); returns its pid."""
    null = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)]
    args = _checked(step_, argv)
    return os.posix_spawnp(args[0], args, clean_env(step_, env), file_actions=null, setsid=True)


def exec_(step_: Step, argv: Sequence[str], env: Mapping[str, str] | None = None) -> None:
    """Replace this process with `argv` (never returns)."""
    args = _checked(step_, argv)
    os.execvpe(args[0], args, clean_env(step_, env))


def stdio_server(
    step_: Step,
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path | None,
    errlog: TextIO,
    named: Sequence[str] = (),
) -> AbstractAsyncContextManager[Any]:
    """The mcp SDK's `stdio_client` for `step_`: the SDK starts the server itself (anyio), so here, where
    every other process starts, its argv is checked and its environment made before the SDK gets them."""
    from mcp import StdioServerParameters, stdio_client

    args = _checked(step_, argv)
    params = StdioServerParameters(command=args[0], args=args[1:], env=clean_env(step_, env, named), cwd=cwd)
    return stdio_client(params, errlog=errlog)


# What callers need of subprocess without importing it (the architecture test allows no other import).
TimeoutExpired = subprocess.TimeoutExpired
PIPE, DEVNULL, STDOUT = subprocess.PIPE, subprocess.DEVNULL, subprocess.STDOUT
CompletedProcess = subprocess.CompletedProcess
Popen = subprocess.Popen


# The steps. `code_from` names every source of code or configuration the process may run with; a step that
# lists From.AGENT is checked above to run inside the walls with no secrets and no open network.
AGENT_COMMAND = step(
    "agent.command",
    "a command the model asked for (shell tool: its session's sandbox server, or a waiting sandbox)",
    (From.AGENT,),
    Walls.SANDBOX,
    Net.BOT,
    test="tests/sandbox/test_sandbox.py",
)
SETUP = step(
    "run.setup",
    "the bot's `setup` commands, before session 1",
    (From.USER, From.BASE),
    Walls.SANDBOX,
    Net.BOT,
    test="tests/run/test_setup_step.py",
)
VERIFY_CHECK = step(
    "verify.check",
    "the bot's `verify` commands (and verify.toml's) on a clean checkout of the committed work",
    (From.AGENT,),
    Walls.SANDBOX,
    test="tests/run/test_verify.py",
)
EVAL_CHECK = step(
    "eval.check",
    "an eval task's check, on a clone of what the bot committed",
    (From.AGENT,),
    Walls.SANDBOX,
    test="tests/sandbox/test_eval_walls.py",
)
EVAL_RUN = step(
    "eval.run",
    "`openbot run` for one eval task, in a fresh repository and OPENBOT_HOME",
    (From.OPENBOT, From.USER),
    Walls.BESIDE,
    Net.OPEN,
    Secrets.MODEL,
    test="tests/cli/test_cli_eval.py",
)
GIT = step(
    "git",
    "openbot's own git: hooks off, no system config, no filter that names a repository path",
    (From.OPENBOT, From.USER),
    Walls.BESIDE,
    test="tests/run/test_repo_attacks.py",
)
GIT_READ = step(
    "git.read",
    "reads of a checkout's config and status with the user's own git, system config included: its"
    " configuration (git/userrepo.py), commit identity (the run's and verification's checkouts),"
    " uncommitted changes, `core.hooksPath` (what the sandbox keeps read-only)",
    (From.OPENBOT, From.USER),
    Walls.BESIDE,
    test="tests/run/test_no_worktree_config.py",
)
SETUP_ON_AGENT_WORK = step(
    "run.setup.agent_work",
    "the bot's `setup` commands where the checkout holds the agent's work (a resume, `--no-worktree`,"
    " verification's clean checkout): the agent's network rule (verification's: the hosts `verify_network`"
    " lists, through openbot's proxy), no cache",
    (From.USER, From.AGENT),
    Walls.SANDBOX,
    Net.BOT,
    test="tests/run/test_setup_trust.py",
)
VERIFY_STATUS = step(
    "verify.status",
    "`git status` in the agent's checkout after a failed check, for its next prompt (its waiting sandbox"
    " or a new one)",
    (From.AGENT,),
    Walls.SANDBOX,
    Net.BOT,
    test="tests/run/test_verify.py",
)
TRASH_RM = step(
    "trash.rm",
    "a detached `rm -rf` of what a run leaves (run repository, temp dir): `chmod` only when rm fails, no link"
    " followed",
    (From.OPENBOT,),
    Walls.BESIDE,
    test="tests/run/test_unconfined_git.py",
)
SANDBOX_PROBE = step(
    "sandbox.probe",
    "`bwrap … true`: can this machine make the sandbox's namespaces",
    (From.OPENBOT,),
    Walls.BESIDE,
    test="tests/sandbox/test_bwrap_missing.py",
)
DOCTOR_GIT = step(
    "doctor.git",
    "`git --version` for `openbot doctor`",
    (From.OPENBOT,),
    Walls.BESIDE,
    test="tests/cli/test_cli_doctor.py",
)
SKILL_CLONE = step(
    "skills.clone",
    "`git clone` of a skill repository the user named to `openbot skills install`",
    (From.USER,),
    Walls.BESIDE,
    Net.OPEN,
    Secrets.USER,
    test="tests/cli/test_cli_skills.py",
)
NOTIFY_COMMAND = step(
    "notify.command",
    "a notify command from the user's config (or the run's base commit), in a private directory, with"
    " the variables its `env` names",
    (From.USER, From.BASE),
    Walls.BESIDE,
    Net.OPEN,
    Secrets.NAMED,
    test="tests/run/test_notify_source.py",
)
FLEET_RUN = step(
    "fleet.run",
    "`openbot run <bot> --json` for one repository of fleet.toml",
    (From.OPENBOT, From.USER),
    Walls.BESIDE,
    Net.OPEN,
    Secrets.MODEL,
    test="tests/cli/test_cli_fleet.py",
)
EVAL_RECIPE = step(
    "eval.recipe",
    "an eval suite's recipe commands, making a task's repository before its run",
    (From.USER,),
    Walls.BESIDE,
    Net.OPEN,
    test="tests/cli/test_cli_eval.py",
)
MCP_SERVER = step(
    "mcp.server",
    "a stdio MCP server from the bot's config, with the variables its `env` names (the mcp SDK starts it"
    " from the gate's argv: `stdio_server`)",
    (From.USER,),
    Walls.SANDBOX,
    Net.BOT,
    Secrets.NAMED,
    test="tests/run/test_mcp_planted.py",
)
RUN_ATTEMPT = step(
    "run.attempt",
    "`openbot run` for one attempt of `--attempts N`, in the user's repository (its own run repository)",
    (From.OPENBOT, From.USER),
    Walls.BESIDE,
    Net.OPEN,
    Secrets.MODEL,
    test="tests/run/test_attempts.py",
)
BOTS_EDITOR = step(
    "bots.editor",
    "the user's $VISUAL or $EDITOR on a bot's config.md, for `openbot bots edit`",
    (From.USER,),
    Walls.BESIDE,
    Net.OPEN,
    Secrets.USER,
    test="tests/cli/test_cli_everyday.py",
)
FORGE_READ = step(
    "forge.read",
    "`openbot feedback gather`'s reader of the forge: a bot's pull request, its failed checks' log tails, the"
    " reviews and comments of people with write access (python -P, from a directory of its own), with the"
    " one token variable the user set (GH_TOKEN or GITHUB_TOKEN)",
    (From.OPENBOT, From.USER),
    Walls.BESIDE,
    Net.FORGE,
    Secrets.NAMED,
    test="tests/cli/test_cli_feedback.py",
)
