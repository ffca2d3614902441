"""The one gate every process openbot starts goes through.

Each process belongs to a named `Step` that says where its code and configuration come from (openbot
itself, the user's own configuration, the run's base commit, the agent's tree) and what it gets (inside
the agent's walls or beside them, network, secrets). The rule the steps are checked against when this
module is imported: a step whose code or configuration can come from the agent's tree runs inside the
agent's walls — sandboxed, no secrets, no open network. At run time `run`/`popen`/`spawn_detached`/`exec`
refuse a sandboxed step whose argv was not made by the sandbox (`Confined`), and every environment loses
the model keys unless the step is openbot's own child that needs them (an `openbot run` it starts).

docs/SANDBOX.md's table of steps is `table()` (tests/test_gate.py compares them); an architecture test
fails on any `subprocess`/`os.exec*`/`os.posix_spawn*` call outside this module.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from openbot.envpolicy import NEVER, is_secret_name


class From(Enum):
    """Where a step's code or configuration comes from."""

    OPENBOT = "openbot"  # openbot's own code and the programs it names (git, bwrap, its interpreter)
    USER = "user"  # what the user controls: $OPENBOT_HOME, the user's git config, their checkout's HEAD
    BASE = "base"  # the run's base commit (the user's committed tree the run started from)
    AGENT = "agent"  # the agent's tree, the run repository, anything the agent wrote


class Walls(Enum):
    SANDBOX = "sandbox"  # inside the agent's walls: an argv made by SandboxPolicy.wrap
    BESIDE = "beside"  # openbot's own process space: no sandbox


class Net(Enum):
    NONE = "none"
    LISTED = "listed"  # only the hosts the bot's (and home) config lists, through openbot's proxy
    BOT = "bot"  # whatever the bot's config grants (network = true/false/list) — the agent's own network
    OPEN = "open"  # the machine's network (openbot's own steps: a forge, a registry the user named)


class Secrets(Enum):
    NONE = "none"  # no secret-looking variable at all
    NAMED = "named"  # only those the user's own config names for this step (an MCP server's env = [...])
    MODEL = "model"  # openbot's own child that calls the model (`openbot run` under eval or fleet)


@dataclass(frozen=True)
class Step:
    name: str
    what: str
    code_from: tuple[From, ...]
    walls: Walls
    net: Net = Net.NONE
    secrets: Secrets = Secrets.NONE
    cwd: str = ""
    test: str = ""  # the test that proves the step keeps to this line

    def __post_init__(self) -> None:
        if From.AGENT in self.code_from and (
            self.walls is not Walls.SANDBOX or self.net is Net.OPEN or self.secrets is not Secrets.NONE
        ):
            raise AssertionError(f"gate step {self.name}: code from the agent's tree runs inside the walls")


class Confined(list[str]):
    """An argv the sandbox made (`SandboxPolicy.wrap`): only these may run a sandboxed step. Under
    `danger-full-access` — the user's explicit choice — it is the command itself, still marked."""


class GateError(Exception):
    """A process was asked to start against its step's line: a bug in openbot, never the agent's doing."""


_STEPS: dict[str, Step] = {}


def step(
    name: str,
    what: str,
    code_from: tuple[From, ...],
    walls: Walls,
    net: Net = Net.NONE,
    secrets: Secrets = Secrets.NONE,
    cwd: str = "",
    test: str = "",
) -> Step:
    """Declare a step, here in this module only: the list below is the whole of what openbot runs."""
    made = Step(name, what, code_from, walls, net, secrets, cwd, test)
    if name in _STEPS and _STEPS[name] != made:
        raise AssertionError(f"gate step {name} declared twice")
    _STEPS[name] = made
    return made


def steps() -> list[Step]:
    return sorted(_STEPS.values(), key=lambda s: s.name)


def clean_env(step_: Step, env: Mapping[str, str] | None, named: Sequence[str] = ()) -> dict[str, str]:
    """The environment a step's process gets: `env` (default: openbot's own, less every secret-looking name
    but those the user's config names for it, `named`), always less the model keys — except for openbot's
    own `openbot run` child (`Secrets.MODEL`)."""
    if named and step_.secrets is not Secrets.NAMED:
        raise GateError(f"gate: step {step_.name} gets no secrets, yet {len(named)} were named")
    model = step_.secrets is Secrets.MODEL
    source = os.environ if env is None else env
    return {
        k: v
        for k, v in source.items()
        if (model or k not in NEVER) and (env is not None or model or k in named or not is_secret_name(k))
    }


def _checked(step_: Step, argv: Sequence[str]) -> list[str]:
    if step_.name not in _STEPS:
        raise GateError(f"gate: step {step_.name} was never declared")
    if step_.walls is Walls.SANDBOX and not isinstance(argv, Confined):
        raise GateError(f"gate: step {step_.name} runs inside the walls, but its argv was not confined")
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


# What callers need of subprocess without importing it (the architecture test allows no other import).
TimeoutExpired = subprocess.TimeoutExpired
PIPE, DEVNULL, STDOUT = subprocess.PIPE, subprocess.DEVNULL, subprocess.STDOUT
CompletedProcess = subprocess.CompletedProcess
Popen = subprocess.Popen


def table() -> str:
    """docs/SANDBOX.md's table of steps, one row a step."""
    rows = [
        "| step | what | code and configuration from | walls | network | secrets | test |",
        "|---|---|---|---|---|---|---|",
    ]
    for s in steps():
        cells = (f"`{s.name}`", s.what, ", ".join(f.value for f in s.code_from), s.walls.value, s.net.value)
        rows.append("| " + " | ".join((*cells, s.secrets.value, s.test)) + " |")
    return "\n".join(rows) + "\n"


# The steps. `code_from` names every source of code or configuration the process may run with; a step that
# lists From.AGENT is checked above to run inside the walls with no secrets and no open network.
AGENT_COMMAND = step(
    "agent.command",
    "a command the model asked for (shell tool, its waiting sandbox)",
    (From.AGENT,),
    Walls.SANDBOX,
    Net.BOT,
    test="tests/sandbox/",
)
SETUP = step(
    "run.setup",
    "the bot's `setup` commands, before session 1",
    (From.USER, From.BASE),
    Walls.SANDBOX,
    Net.BOT,
    test="tests/run/test_setup.py",
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
