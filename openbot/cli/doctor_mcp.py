"""`openbot doctor`'s MCP check: start every server of every home bot as a run would (sandboxed, the
command allowlist for its environment) and list its tools; one line per server.

Doctor confines servers read-only in a temp dir (no worktree exists); a committed bot's servers are left
to `openbot run`, which starts them only once the bot is trusted.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from openbot.cli.doctor_check import Check

if TYPE_CHECKING:
    from openbot.config.bots import BotRef


def check_mcp(repo_root: Path | None) -> Iterator[Check]:
    from openbot.config.bots import bots_by_source
    from openbot.errors import OpenbotError

    for ref, shadowed in bots_by_source(repo_root):
        try:
            config = ref.load().config
        except OpenbotError:
            continue  # check_bots has said why
        if not config.mcp_servers or shadowed:
            continue
        if ref.source != "home":
            yield Check(
                "WARN",
                f"MCP servers of bot {ref.name} ({ref.source})",
                "not started by doctor: a committed bot's servers start in `openbot run` once you trust it",
            )
            continue
        yield from _start_all(ref, config)


def _start_all(ref: BotRef, config: object) -> Iterator[Check]:
    from openbot.agent.tools.mcp import McpHub
    from openbot.agent.tools.mcp.launch import launch_for
    from openbot.config.botconfig import BotConfig
    from openbot.config.integrations import mcp_servers
    from openbot.envpolicy import child_env
    from openbot.errors import OpenbotError
    from openbot.sandbox import policy_for_run

    assert isinstance(config, BotConfig)
    with tempfile.TemporaryDirectory(prefix="openbot-doctor-") as tmp:
        work = Path(tmp)
        mode = "danger-full-access" if config.sandbox == "danger-full-access" else "read-only"
        try:
            sandbox = policy_for_run(
                mode,
                worktree=work,
                common_dir=None,
                worktree_admin_dir=None,
                tmp_dir=work / "tmp",
                skills_dir=None,
                network=config.network is True,
                fallback=config.sandbox_fallback,
            )
        except OpenbotError as e:
            yield Check("FAIL", f"MCP servers of bot {ref.name}", f"cannot be sandboxed: {e.one_line()}")
            return
        specs = mcp_servers(config, str(ref.config_path))
        hub = McpHub(
            specs,
            lambda spec: launch_for(
                spec,
                environ=os.environ,
                base_env=child_env(os.environ, config.env_passthrough),
                sandbox=sandbox,
                workdir=work,
                bot_dir=ref.config_path.parent,
            ),
            work / "logs",
        )
        try:
            hub.start()
            for notice in hub.take_notices():
                ok = notice.kind == "mcp_server_started"
                yield Check("PASS" if ok else "FAIL", f"bot {ref.name}", notice.message)
        finally:
            hub.close()
