"""How a configured server is reached: a stdio server's command line goes through the run's sandbox (the
same confinement, network rule and environment allowlist as the agent's shell commands, never the model
key); an HTTP server's URL and headers get their `${NAME}` secrets from openbot's environment."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from openbot.agent.tools.mcp.client import Launch
from openbot.config import envrefs
from openbot.config.mcp import McpServerSpec
from openbot.envpolicy import NEVER, child_env, without_paths_into

if TYPE_CHECKING:
    from openbot.sandbox import SandboxPolicy


def placeholders(bot_dir: Path) -> dict[str, str]:
    return {"OPENBOT_PYTHON": sys.executable, "BOT_DIR": str(bot_dir)}


def launch_for(
    spec: McpServerSpec,
    *,
    environ: Mapping[str, str],
    base_env: Mapping[str, str],
    sandbox: SandboxPolicy | None,
    workdir: Path,
    bot_dir: Path,
    tree: Path | None = None,
) -> Launch:
    """`base_env` is the run's environment for commands (allowlist + git identity); `environ` is openbot's;
    `workdir` is where a stdio server starts: never a directory the agent can write (run/mcp_servers.py);
    `tree` is the agent's: no search path of the server's (PATH, PYTHONPATH…) leads into it."""
    where = f"mcp_servers.{spec.name}"
    if spec.url:
        return Launch(
            url=envrefs.expand(spec.url, environ, "config", f"{where}.url"),
            headers={
                h: envrefs.expand(v, environ, "config", f"{where}.headers.{h}")
                for h, v in spec.headers.items()
            },
        )
    values = placeholders(bot_dir)
    argv = [envrefs.expand(a, values, "config", where) for a in (spec.command, *spec.args)]
    env = {**base_env, **child_env(environ, spec.env, forge_token=True)}
    env = without_paths_into(env, tree) if tree is not None else env
    if sandbox is not None:
        if spec.allow_network and not sandbox.network:
            sandbox = dataclasses.replace(sandbox, network=True)  # this server only, said at run start
        env.update(sandbox.env())
    else:  # no policy at all (a tool tested on its own; a run always has one): unconfined
        from openbot.sandbox import SandboxPolicy

        sandbox = SandboxPolicy.unconfined()
    env = {k: v for k, v in env.items() if k not in NEVER}
    return Launch(argv=sandbox.wrap(argv), env=env, cwd=workdir, named=tuple(spec.env))
