"""The gate's vocabulary (openbot/gate.py): what a step says of itself — where its code and configuration
come from, what it gets — and the rule every step is checked against when it is declared."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum

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
    # The forge's API address (GITHUB_API_URL) with its token, and the signed log URLs it redirects to,
    # fetched without the token (openbot/forge/api.py): what `openbot feedback gather` reads.
    FORGE = "forge"


class Secrets(Enum):
    NONE = "none"  # no secret-looking variable at all
    NAMED = "named"  # only those the user's own config names for this step (an MCP server's env = [...])
    MODEL = "model"  # openbot's own child that calls the model (`openbot run` under eval or fleet)
    # The user's own environment less the model keys (ssh agent, a forge's credentials): a step that acts
    # for the user against a host the user named on the command line (`skills install <url>`).
    USER = "user"


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


def clean_env(step_: Step, env: Mapping[str, str] | None, named: Sequence[str] = ()) -> dict[str, str]:
    """The environment a step's process gets: `env` (default: openbot's own, less every secret-looking name
    but those the user's config names for it, `named`: exact names or `PREFIX_*`), always less the model
    keys — except for openbot's own `openbot run` child (`Secrets.MODEL`)."""
    if named and step_.secrets is not Secrets.NAMED:
        raise GateError(f"gate: step {step_.name} gets no secrets, yet {len(named)} were named")
    model = step_.secrets is Secrets.MODEL
    # An env the caller built is its own choice of names (tested where it is built); an inherited one is
    # filtered here.
    keep = model or env is not None or step_.secrets is Secrets.USER
    source = os.environ if env is None else env
    return {
        k: v
        for k, v in source.items()
        if (model or k not in NEVER) and (keep or not is_secret_name(k) or _named(k, named))
    }


def _named(name: str, named: Sequence[str]) -> bool:
    return any(name.startswith(p[:-1]) if p.endswith("*") else name == p for p in named)


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
    """Declare a step — in openbot/gate.py's list only: that list is the whole of what openbot runs."""
    made = Step(name, what, code_from, walls, net, secrets, cwd, test)
    if name in _STEPS and _STEPS[name] != made:
        raise AssertionError(f"gate step {name} declared twice")
    _STEPS[name] = made
    return made


def steps() -> list[Step]:
    return sorted(_STEPS.values(), key=lambda s: s.name)


def is_declared(step_: Step) -> bool:
    return _STEPS.get(step_.name) == step_


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


def own_python_reading_cwd(argv: Sequence[str]) -> bool:
    """openbot's interpreter started so that `-m`/`-c` put the working directory first on sys.path.

    Beside the walls the working directory is a repository (the user's, a fleet's, an eval task's): an
    `openbot/` package at its top would be imported in place of openbot, with the model keys."""
    if not argv or os.path.realpath(argv[0]) != os.path.realpath(sys.executable):
        return False
    for arg in argv[1:]:
        if not arg.startswith("-") or arg in ("-m", "-c") or arg.startswith("--"):
            return True
        if "P" in arg or "I" in arg:
            return False
    return True
