"""Starting the bot's MCP servers for a run, inside the run's sandbox and environment (docs/MCP.md).

A server starts in an empty directory of the run's own state, which the sandbox keeps read-only, never in
the agent's checkout: `python -m pkg`, `npx pkg` or `node server.js` look in their working directory
first, and on `--resume` the checkout holds whatever the agent planted there (docs/SANDBOX.md).
"""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from openbot.processes import marked_now

if TYPE_CHECKING:
    from openbot.agent.tools.mcp import McpHub
    from openbot.run.plan import RunPlan
    from openbot.run.workspace import Workspace


def start_mcp(plan: RunPlan, workspace: Workspace, log_dir: Path, cancel: threading.Event) -> McpHub | None:
    """The started hub, or None when the bot has no MCP servers (then nothing of the SDK is imported)."""
    from openbot.config.integrations import mcp_servers

    specs = mcp_servers(plan.config, str(plan.bot.config_path))
    if not specs:
        return None
    from openbot.agent.tools.mcp import McpHub
    from openbot.agent.tools.mcp.launch import launch_for

    bot_dir = plan.bot.config_path.parent
    where = server_dir(log_dir.parent / "mcp-cwd")
    hub = McpHub(
        specs,
        lambda spec: launch_for(
            spec,
            environ=os.environ,
            # where the agent works, for servers that read it; they never start there, nor import from it
            base_env={**workspace.server_env, "OPENBOT_WORKDIR": str(workspace.workdir)},
            sandbox=workspace.sandbox,
            workdir=where,
            bot_dir=bot_dir,
            tree=workspace.workdir,
        ),
        log_dir,
    )
    hub.start(cancel)
    # What runs now is the servers themselves: verification spares these, and stops whatever a server
    # starts later (a shell-capable server's child could move the branch after the check).
    workspace.servers = marked_now(workspace.workdir)
    return hub


def server_dir(path: Path) -> Path:
    """`path` as a new, empty, private directory (whatever a killed run left there is thrown away)."""
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(mode=0o700, parents=True)
    return path
