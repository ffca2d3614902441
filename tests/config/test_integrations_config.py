"""`[mcp_servers.*]` and `[[notify]]` are validated when the config is read: one line naming the file,
the key and the value, exit 2, nothing created."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from openbot.config.botconfig import validate
from openbot.config.mcp import parse_servers
from openbot.errors import ConfigError
from openbot.state.trust import asks
from tests.helpers import make_bot, run_cli, sessions

SERVER = {"command": "npx", "args": ["-y", "tracker-mcp"]}


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (
            {"mcp_servers": {"t": {"comand": "x"}}},
            "unknown key 'mcp_servers.t.comand' (did you mean 'command'?)",
        ),
        ({"mcp_servers": {"t": {}}}, "key 'mcp_servers.t' needs exactly one of 'command' (stdio) or 'url'"),
        ({"mcp_servers": {"t": {**SERVER, "url": "https://x/mcp"}}}, "needs exactly one of 'command'"),
        ({"mcp_servers": {"a__b": SERVER}}, "MCP server name 'a__b' cannot be used in tool names"),
        (
            {"mcp_servers": {"t": {**SERVER, "args": "-y"}}},
            "key 'mcp_servers.t.args' must be a list of strings",
        ),
        (
            {"mcp_servers": {"t": {**SERVER, "timeout_secs": 0}}},
            "key 'mcp_servers.t.timeout_secs' must be more",
        ),
        (
            {"mcp_servers": {"t": {**SERVER, "args": ["${TOKEN}"]}}},
            "command lines may only use ${OPENBOT_PYTHON}",
        ),
        (
            {"mcp_servers": {"t": {**SERVER, "env": ["ANTHROPIC_API_KEY"]}}},
            "lists 'ANTHROPIC_API_KEY', which would pass ANTHROPIC_API_KEY, a model key",
        ),
        ({"mcp_servers": {"t": {"url": "https://x/mcp"}}}, "is reached over the network (mcp_servers.t.url)"),
        (
            {"mcp_servers": {"t": {"url": "ftp://x", "allow_network": True}}},
            "must start with http:// or https://",
        ),
        (
            {"mcp_servers": {"t": {"url": "https://x/${}", "allow_network": True}}},
            "which is not a variable name",
        ),
        ({"mcp_servers": []}, "key 'mcp_servers' must be a table"),
        ({"notify": [{"url": "https://x", "command": "y"}]}, "key 'notify[1]' needs exactly one of 'url' or"),
        ({"notify": [{"url": "${HOOK}", "on": ["done"]}]}, "key 'notify[1].on' must list run endings"),
        ({"notify": [{"command": "x", "when": ["failed"]}]}, "unknown key 'notify[1].when'"),
        ({"notify": {"url": "https://x"}}, "key 'notify' must be a list of tables"),
    ],
)
def test_bad_tables_name_file_key_and_value(values: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as e:
        validate(values, "bot/config.md")
    assert e.value.one_line().startswith("bot/config.md: ") and message in e.value.one_line()


def test_good_tables_are_typed() -> None:
    servers = {
        "tracker": {**SERVER, "env": ["TRACKER_*"], "tools": ["get_*"], "deny_tools": ["get_secret"]},
        "docs": {"url": "https://d/mcp", "headers": {"Authorization": "Bearer ${T}"}, "allow_network": True},
    }
    config = validate({"mcp_servers": servers, "notify": [{"url": "${HOOK}"}]}, "c.md")
    tracker, docs = parse_servers(config.mcp_servers, "c.md")
    assert tracker.transport == "stdio" and docs.transport == "http"
    assert tracker.offers("get_issue") and not tracker.offers("get_secret") and not tracker.offers("delete")
    assert validate({"network": True, "mcp_servers": {"d": {"url": "https://d/mcp"}}}, "c.md")


def test_a_bad_table_stops_the_run_before_anything_exists(repo: Path) -> None:
    make_bot("bad", [], config='sleep_secs = 0\n[mcp_servers.t]\ncommand = "x"\ntimeout_secs = "soon"')
    out = run_cli("run", "bad", cwd=repo)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    [line] = [line for line in out.stderr.splitlines() if line.strip()]
    assert "config.md: key 'mcp_servers.t.timeout_secs' must be a number, got 'soon'" in line
    assert sessions("bad") == []


def test_trust_says_what_servers_and_notify_commands_a_bot_asks_for() -> None:
    said = asks({"mcp_servers": {"tracker": SERVER}, "notify": [{"command": ["./page.sh"]}]})
    assert "MCP servers tracker" in said and "notify commands run outside the sandbox" in said
