"""A bot's links to the outside — MCP servers and notification targets — as typed values, and the
environment they draw on: `check_environment` at plan time (an unset `${NAME}` is exit 2 before anything
starts) and `secret_values` for the redactor (what `${NAME}` expands to is hidden everywhere)."""

from __future__ import annotations

from collections.abc import Mapping

from openbot.config import envrefs
from openbot.config.botconfig import BotConfig
from openbot.config.mcp import McpServerSpec, env_templates, parse_servers
from openbot.config.notify import NotifyTarget, parse_targets


def mcp_servers(config: BotConfig, source: str = "config") -> list[McpServerSpec]:
    return parse_servers(config.mcp_servers, source, config.network is True, config.api_key_env)


def notify_targets(config: BotConfig, source: str = "config") -> list[NotifyTarget]:
    return parse_targets(config.notify, source, config.api_key_env)


def _templates(config: BotConfig) -> list[tuple[str, str]]:
    """(key, template) for every config value that may use `${NAME}`."""
    found = [(f"notify[{t.index}].url", t.url) for t in notify_targets(config) if t.url]
    for s in mcp_servers(config):
        found += [(f"mcp_servers.{s.name}.url", s.url)] if s.url else []
        found += [(f"mcp_servers.{s.name}.headers.{h}", v) for h, v in s.headers.items()]
    return found


def check_environment(config: BotConfig, source: str, environ: Mapping[str, str]) -> None:
    """ConfigError naming file, key and variable when a `${NAME}` the bot uses is unset."""
    for key, template in _templates(config):
        envrefs.expand(template, environ, source, key)


def secret_values(config: BotConfig, environ: Mapping[str, str]) -> list[str]:
    texts = [t for _, t in _templates(config)]
    return envrefs.secret_values([*texts, *env_templates(mcp_servers(config))], environ)
