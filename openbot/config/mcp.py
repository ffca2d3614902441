"""`[mcp_servers.<name>]` tables: the MCP servers whose tools a bot may use, validated into `McpServerSpec`.

    [mcp_servers.tracker]                 # stdio: a command openbot starts inside the run's sandbox
    command = "${OPENBOT_PYTHON}"         # ${OPENBOT_PYTHON}: openbot's interpreter; ${BOT_DIR}: the
    args = ["${BOT_DIR}/server.py"]       #   directory of this config.md (only these two in command/args)
    env = ["TRACKER_TOKEN"]               # names (or PREFIX_*) passed on top of the command allowlist
    tools = ["search", "get_*"]           # offer only these (fnmatch patterns); deny_tools removes some
    timeout_secs = 60                     # per call; startup_timeout_secs for start-up and tools/list

    [mcp_servers.docs]                    # streamable HTTP, reached from openbot's own process
    url = "https://docs.example.com/mcp"
    headers = { Authorization = "Bearer ${DOCS_TOKEN}" }
    allow_network = true                  # or `network = true` for the whole bot

Everything is checked here, when the config is read: unknown keys, wrong types, names the model cannot
call, a server with both or neither of command/url, an HTTP server without a network allowance.
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass, field
from typing import Any

from openbot.config import envrefs
from openbot.errors import ConfigError, UsageError

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$")
PLACEHOLDERS = ("OPENBOT_PYTHON", "BOT_DIR")  # what command and args may refer to
DEFAULT_TIMEOUT_SECS = 60.0
DEFAULT_STARTUP_SECS = 30.0
MAX_TIMEOUT_SECS = 24 * 3600.0

_KEYS: dict[str, tuple[type, str]] = {
    "command": (str, "a string"),
    "args": (list, "a list of strings"),
    "env": (list, "a list of strings"),
    "url": (str, "a string"),
    "headers": (dict, "a table of strings"),
    "allow_network": (bool, "true or false"),
    "tools": (list, "a list of strings"),
    "deny_tools": (list, "a list of strings"),
    "timeout_secs": (float, "a number"),
    "startup_timeout_secs": (float, "a number"),
}


@dataclass(frozen=True)
class McpServerSpec:
    """One configured server, as config.md says it (templates not yet expanded)."""

    name: str
    command: str = ""
    args: tuple[str, ...] = ()
    env: tuple[str, ...] = ()
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    allow_network: bool = False
    tools: tuple[str, ...] = ()
    deny_tools: tuple[str, ...] = ()
    timeout_secs: float = DEFAULT_TIMEOUT_SECS
    startup_timeout_secs: float = DEFAULT_STARTUP_SECS

    @property
    def transport(self) -> str:
        return "http" if self.url else "stdio"

    def offers(self, tool: str) -> bool:
        """Whether the allow/deny lists let the model see `tool` (the server's own name for it)."""
        from fnmatch import fnmatchcase

        if self.tools and not any(fnmatchcase(tool, p) for p in self.tools):
            return False
        return not any(fnmatchcase(tool, p) for p in self.deny_tools)


def parse_servers(
    value: object, source: str, network: bool = False, api_key_env: str = ""
) -> list[McpServerSpec]:
    """Every `[mcp_servers.<name>]` table as a spec; ConfigError naming file, key and value otherwise."""
    if not isinstance(value, dict):
        raise ConfigError(
            f"{source}: key 'mcp_servers' must be a table of servers",
            hint="write [mcp_servers.<name>] tables",
        )
    return [_parse_one(name, table, source, network, api_key_env) for name, table in value.items()]


def _parse_one(name: str, table: object, source: str, network: bool, api_key_env: str) -> McpServerSpec:
    where = f"mcp_servers.{name}"
    if not NAME_RE.match(name) or "__" in name:
        raise ConfigError(
            f"{source}: MCP server name {name!r} cannot be used in tool names",
            hint="use up to 40 letters, digits, '-' and '_' (no '__'), starting with a letter or digit",
        )
    if not isinstance(table, dict):
        raise ConfigError(f"{source}: key '{where}' must be a table", hint=f"write [{where}] and its keys")
    values = {k: _checked(k, v, source, where) for k, v in table.items()}
    spec = McpServerSpec(
        name=name,
        command=values.get("command", ""),
        args=tuple(values.get("args", ())),
        env=tuple(values.get("env", ())),
        url=values.get("url", ""),
        headers=dict(values.get("headers", {})),
        allow_network=values.get("allow_network", False),
        tools=tuple(values.get("tools", ())),
        deny_tools=tuple(values.get("deny_tools", ())),
        timeout_secs=float(values.get("timeout_secs", DEFAULT_TIMEOUT_SECS)),
        startup_timeout_secs=float(values.get("startup_timeout_secs", DEFAULT_STARTUP_SECS)),
    )
    _check_shape(spec, source, where, network)
    _check_no_model_key(spec, source, where, api_key_env)
    return spec


def _checked(key: str, value: Any, source: str, where: str) -> Any:
    if key not in _KEYS:
        close = difflib.get_close_matches(key, _KEYS, n=1)
        hint = f"did you mean '{close[0]}'?" if close else f"known keys: {', '.join(_KEYS)}"
        raise ConfigError(f"{source}: unknown key '{where}.{key}'", hint=hint)
    kind, said = _KEYS[key]
    ok = isinstance(value, kind) and not (kind is not bool and isinstance(value, bool))
    if kind is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
    if kind is list and ok:
        ok = all(isinstance(v, str) for v in value)
    if kind is dict and ok:
        ok = all(isinstance(v, str) for v in value.values())
    if not ok:
        raise ConfigError(
            f"{source}: key '{where}.{key}' must be {said}, got {value!r:.80}", hint=f"fix '{where}.{key}'"
        )
    if kind is float and not (math.isfinite(value) and 0 < value <= MAX_TIMEOUT_SECS):
        raise ConfigError(
            f"{source}: key '{where}.{key}' must be more than 0, up to {MAX_TIMEOUT_SECS:g}, got {value!r}",
            hint=f"e.g. {key} = {DEFAULT_TIMEOUT_SECS:g}",
        )
    return value


def _check_shape(spec: McpServerSpec, source: str, where: str, network: bool) -> None:
    if bool(spec.command) == bool(spec.url):
        raise ConfigError(
            f"{source}: key '{where}' needs exactly one of 'command' (stdio) or 'url' (streamable HTTP)",
            hint='e.g. command = "npx" with args, or url = "https://…/mcp"',
        )
    if spec.url:
        _check_http(spec, source, where, network)
    else:
        for key, text in [("command", spec.command), *(("args", a) for a in spec.args)]:
            envrefs.check(text, source, f"{where}.{key}")
            bad = [n for n in envrefs.names(text) if n not in PLACEHOLDERS]
            if bad:
                raise ConfigError(
                    f"{source}: key '{where}.{key}' refers to ${{{bad[0]}}}; command lines may only use "
                    f"{', '.join('${' + p + '}' for p in PLACEHOLDERS)} (they are visible to every process)",
                    hint=f'pass secrets to the server through its environment: env = ["{bad[0]}"]',
                )
        if spec.headers:
            raise ConfigError(f"{source}: key '{where}.headers' is for url servers", hint="remove it")
    _check_env(spec, source, where)


def _check_http(spec: McpServerSpec, source: str, where: str, network: bool) -> None:
    envrefs.check(spec.url, source, f"{where}.url")
    if not re.match(r"^https?://", spec.url):
        raise ConfigError(
            f"{source}: key '{where}.url' must start with http:// or https://, got {spec.url!r:.80}",
            hint='e.g. url = "https://example.com/mcp"',
        )
    for header, text in spec.headers.items():
        envrefs.check(text, source, f"{where}.headers.{header}")
    if spec.args or spec.env:
        key = "args" if spec.args else "env"
        raise ConfigError(f"{source}: key '{where}.{key}' is for command servers", hint="remove it")
    if not (network or spec.allow_network):
        raise ConfigError(
            f"{source}: MCP server '{spec.name}' is reached over the network ({where}.url) but the bot has "
            "network = false",
            hint=f"set allow_network = true in [{where}] for this server only, or network = true",
        )


def _check_env(spec: McpServerSpec, source: str, where: str) -> None:
    from openbot.envpolicy import check_pattern

    for entry in spec.env:
        try:
            check_pattern(entry)
        except UsageError as e:
            raise ConfigError(
                f"{source}: key '{where}.env' has entry {entry!r}, which is not a variable name or PREFIX_*",
                hint=e.hint,
            ) from e


def _check_no_model_key(spec: McpServerSpec, source: str, where: str, api_key_env: str) -> None:
    """No way to hand a server a model key (NEVER, or the bot's `api_key_env`): not through `env`, not as
    `${NAME}` in a URL or a header."""
    from openbot.envpolicy import model_key_passed_by

    for entry in spec.env:
        if key := model_key_passed_by(entry, api_key_env):
            raise ConfigError(
                f"{source}: key '{where}.env' lists {entry!r}, which would pass {key}, a model key",
                hint=f"remove {entry!r}: a model key never reaches an MCP server",
            )
    for key, text in [("url", spec.url), *((f"headers.{h}", v) for h, v in spec.headers.items())]:
        for name in envrefs.names(text):
            if model_key_passed_by(name, api_key_env):
                raise ConfigError(
                    f"{source}: key '{where}.{key}' uses ${{{name}}}, a model key",
                    hint="give the server a token of its own: a model key never reaches an MCP server",
                )


def env_templates(specs: list[McpServerSpec]) -> list[str]:
    """Every text of these specs that may hold `${NAME}` secrets (for the redactor)."""
    return [text for s in specs for text in (s.url, *s.headers.values()) if text]
