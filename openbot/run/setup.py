"""The per-run setup step: the bot config's `setup` commands, run before the first session of every
invocation (a resume included: its checkout is new) in the bot's checkout, confined like the agent's
commands and logged like them (command events, full output under outputs/).

- Trusted or not: the setup gets more than the agent (network, a cache later runs use) only when its
  checkout is the repository as the run started from, before the agent acted: a new run in its own
  checkout. A resume's checkout holds the agent's commits, a `--no-worktree` checkout what earlier
  runs left, a `--with-changes` checkout the uncommitted changes it carried (perhaps an earlier
  `--no-worktree` agent's), so there the setup runs with the agent's own network rule and no shared cache
  (docs/SANDBOX.md, "Steps openbot runs itself").
- Network: only when the config says so (`setup_network`, or the bot's own `network`); a list of hosts is
  served by a proxy of its own for the setup's duration (sandbox/proxy.py).
- A cache that survives runs, per repository: `…/workspaces/<project>/cache/` is writable to a trusted
  setup only, and pip, uv, npm and pre-commit are pointed at it, so a nightly setup downloads once. The
  agent's own commands never get it writable, and no other repository's runs see it. A damaged entry
  (a link, a file where a directory belongs) is a notice and is made anew.
- The environment it makes: a virtualenv at `<checkout>/.venv` goes first on PATH, with VIRTUAL_ENV set,
  for the setup's later commands and for every command of the agent. That is how a Python project's
  tests import the bot's checkout, never the user's editable install (README, docs/ci.md). The
  pre-commit environments it installs (`pre-commit install-hooks`) are what the hooks of the agent's
  commits use, offline (PRE_COMMIT_HOME, read-only to the agent).
- A failing command ends the run (exit 1) before the model is called; the bot's work so far is kept.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

from openbot import gate
from openbot.agent.tools.base import ToolContext, ToolFailed
from openbot.agent.tools.shell import ShellTool
from openbot.errors import OpenbotError
from openbot.events import Command, Event, Notice
from openbot.paths import make_private_dir

VENV = ".venv"
# Where each tool keeps its download cache, below the bot's cache dir.
CACHE_VARS = {
    "PIP_CACHE_DIR": "pip",
    "UV_CACHE_DIR": "uv",
    "npm_config_cache": "npm",
    "PRE_COMMIT_HOME": "pre-commit",
}


class SetupFailed(OpenbotError):
    """A setup command failed: the run ends before the first model call."""

    exit_code = 1


def venv_env(workdir: Path, env: dict[str, str]) -> dict[str, str]:
    """PATH and VIRTUAL_ENV for the checkout's `.venv`, when there is one; else nothing."""
    venv = workdir / VENV
    if not (venv / "bin").is_dir():
        return {}
    path = env.get("PATH", os.defpath)
    return {"PATH": f"{venv / 'bin'}{os.pathsep}{path}", "VIRTUAL_ENV": str(venv)}


def cache_env(cache_dir: Path, notices: list[str]) -> dict[str, str]:
    """The cache variables, each directory made; a damaged one is removed, made anew and said in `notices`."""
    env = {}
    for name, sub in CACHE_VARS.items():
        for path in (cache_dir, cache_dir / sub):
            if os.path.islink(path) or (os.path.lexists(path) and not path.is_dir()):
                notices.append(f"setup cache: {path} was not a directory (a link or a file): made anew")
                os.unlink(path)
        env[name] = str(make_private_dir(cache_dir / sub))
    return env


def _prepared_hooks(cache_dir: Path) -> dict[str, str]:
    """The pre-commit environments a setup installed (`pre-commit install-hooks`), for the hooks the
    agent's commits run: read-only to it (pre-commit uses a store it cannot write as it is), and offline,
    where its own $HOME's cache would be empty and the network closed."""
    store = cache_dir / CACHE_VARS["PRE_COMMIT_HOME"]
    try:
        prepared = any(p.name != "README" for p in store.iterdir())
    except OSError:
        prepared = False
    return {"PRE_COMMIT_HOME": str(store)} if prepared else {}


class _Watch:
    """Passes events on and remembers the last command's."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.command: Command | None = None

    def emit(self, event: Event) -> None:
        if isinstance(event, Command):
            self.command = event
        self.inner.emit(event)


def run_setup(
    commands: list[str], ctx: ToolContext, cache_dir: Path, network: bool | list[str], untrusted: str
) -> dict[str, str]:
    """`_run_setup` with `network`, when a list, served by a proxy for the setup's duration (a trusted
    setup's only: an untrusted one keeps the policy it was given, the agent's or the check's)."""
    from openbot.config.netconfig import proxied

    if untrusted or not isinstance(network, list):
        return _run_setup(commands, ctx, cache_dir, network is True, untrusted)
    with proxied(network, "setup_network", ctx.sandbox, ctx.sink) as policy:
        return _run_setup(commands, dataclasses.replace(ctx, sandbox=policy), cache_dir, False, untrusted)


def _run_setup(
    commands: list[str], ctx: ToolContext, cache_dir: Path, network: bool, untrusted: str
) -> dict[str, str]:
    """Run `commands` in order, stopping at the first failure (SetupFailed); returns the environment the
    agent's commands get on top of `ctx.env` (the virtualenv's PATH and VIRTUAL_ENV, if one was made).
    `untrusted` says why the checkout may hold an agent's work (a resume, `--no-worktree`, changes
    `--with-changes` carried): then the agent's network rule and no cache, whatever the config."""
    policy, watch, trusted = ctx.sandbox, _Watch(ctx.sink), not untrusted
    repaired: list[str] = []
    caches = cache_env(cache_dir, repaired) if trusted else {}
    if policy is not None and policy.confined and trusted:
        policy = dataclasses.replace(
            policy, network=policy.network or network, writable=(*policy.writable, cache_dir.resolve())
        )
    for message in repaired:
        watch.emit(Notice(kind="setup_cache_repaired", message=message))
    shell = ShellTool(ctx.default_timeout_secs, gate.SETUP if trusted else gate.SETUP_ON_AGENT_WORK)
    how = "" if trusted else f" ({untrusted}: no setup network, no cache)"
    watch.emit(
        Notice(
            kind="setup_started", message=f"setup: {len(commands)} command(s) before the first session{how}"
        )
    )
    for number, command in enumerate(commands, 1):
        env = {**ctx.env, **venv_env(ctx.workdir, ctx.env), **caches}
        step = dataclasses.replace(ctx, sandbox=policy, env=env, sink=watch)
        try:
            shell.run({"command": command}, step, f"setup-{number}")
        except ToolFailed as e:
            raise SetupFailed(f"setup command {number} of {len(commands)} could not run: {e}") from None
        ctx.command_count = step.command_count
        ran = watch.command
        if ran is None or ran.exit_code != 0:
            why = "timed out" if ran and ran.timed_out else f"exited with {ran.exit_code if ran else '?'}"
            raise SetupFailed(
                f"setup command {number} of {len(commands)} {why}: {command}",
                hint="its output is in the session's history (openbot history <bot> --session N); "
                "fix `setup` in the bot's config, then resume the run"
                + ("" if trusted else f" ({untrusted}: the setup has no setup network and no cache)"),
            )
    extra = venv_env(ctx.workdir, ctx.env)
    done = "setup done" + (f"; the agent's commands use {ctx.workdir / VENV}" if extra else "")
    extra |= _prepared_hooks(cache_dir)
    watch.emit(Notice(kind="setup_done", message=done))
    return extra
