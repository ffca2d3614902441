"""Starting the bot's MCP servers for a run, inside the run's sandbox and environment (docs/MCP.md)."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING

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
    hub = McpHub(
        specs,
        lambda spec: launch_for(
            spec,
            environ=os.environ,
            base_env=workspace.env,
            sandbox=workspace.sandbox,
            workdir=workspace.workdir,
            bot_dir=bot_dir,
        ),
        log_dir,
    )
    hub.start(cancel)
    return hub
