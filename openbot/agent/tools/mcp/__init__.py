"""MCP servers as the agent's tools: `McpHub` starts the configured servers and offers their tools,
named `<server>__<tool>`, next to openbot's own (docs/MCP.md)."""

from openbot.agent.tools.mcp.hub import McpHub

__all__ = ["McpHub"]
