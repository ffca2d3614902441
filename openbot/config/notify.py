"""`[[notify]]` tables: where a run reports how it ended, validated into `NotifyTarget`.

[[notify]]
url = "${SLACK_WEBHOOK_URL}"          # JSON POST of the run summary, with a Slack-compatible `text`
on = ["failed", "limit"]              # which endings; default: every ending

[[notify]]
command = ["./tools/page-me.sh"]      # the summary as JSON on stdin (a string runs with `sh -c`); a path
env = ["PAGER_TOKEN"]                 #   in the repository is read from the run's base commit
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import get_args

from openbot.config import envrefs
from openbot.errors import ConfigError
from openbot.stops import Status

# Every status a run can end with (stops.Status without "running"), in its order.
ENDINGS = tuple(status for status in get_args(Status) if status != "running")
_KEYS = ("url", "command", "on", "env")
_ENV_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\*?$")


@dataclass(frozen=True)
class NotifyTarget:
    index: int  # position in the [[notify]] list, 1-based, for messages
    url: str = ""  # a template: `${NAME}` is expanded at delivery, never shown expanded
    command: tuple[str, ...] = ()
    on: tuple[str, ...] = ENDINGS
    env: tuple[str, ...] = ()  # variables (names or PREFIX_*) a command gets on top of the minimal set

    @property
    def label(self) -> str:
        """How messages name this target: the URL as written (secrets stay `${NAME}`), or the command."""
        what = f"webhook {shown_url(self.url)}" if self.url else f"command {' '.join(self.command)[:80]}"
        return f"notify[{self.index}] ({what})"


def shown_url(url: str) -> str:
    """A URL fit for messages: as written when its secrets are `${NAME}` references, else scheme and host
    only (a literal webhook URL carries its secret in the path or the query)."""
    if "${" in url:
        return url
    m = re.match(r"^(https?://[^/?#]*)(.?)", url)
    return (m.group(1) + ("/…" if m.group(2) else "")) if m else "(url)"


def parse_targets(value: object, source: str, api_key_env: str = "") -> list[NotifyTarget]:
    if not isinstance(value, list) or not all(isinstance(t, dict) for t in value):
        raise ConfigError(
            f"{source}: key 'notify' must be a list of tables",
            hint="write [[notify]] tables with url or command",
        )
    return [_parse_one(i, table, source, api_key_env) for i, table in enumerate(value, 1)]


def _parse_one(index: int, table: dict[str, object], source: str, api_key_env: str) -> NotifyTarget:
    where = f"notify[{index}]"
    for key in table:
        if key not in _KEYS:
            close = difflib.get_close_matches(key, _KEYS, n=1)
            hint = f"did you mean '{close[0]}'?" if close else f"known keys: {', '.join(_KEYS)}"
            raise ConfigError(f"{source}: unknown key '{where}.{key}'", hint=hint)
    url, command, on = table.get("url", ""), table.get("command", []), table.get("on", list(ENDINGS))
    if bool(url) == bool(command):
        raise ConfigError(
            f"{source}: key '{where}' needs exactly one of 'url' or 'command'",
            hint='e.g. url = "${SLACK_WEBHOOK_URL}" or command = ["./notify.sh"]',
        )
    if not isinstance(url, str):
        raise ConfigError(f"{source}: key '{where}.url' must be a string, got {url!r:.80}", hint="quote it")
    if url:
        envrefs.check(url, source, f"{where}.url")
        if not re.match(r"^(https?://|\$\{)", url):
            raise ConfigError(
                f"{source}: key '{where}.url' must start with http:// or https://, got {shown_url(url)!r}",
                hint='e.g. url = "${SLACK_WEBHOOK_URL}"',
            )
    if isinstance(command, str):
        command = ["sh", "-c", command]
    if not isinstance(command, list) or not all(isinstance(c, str) and c for c in command):
        raise ConfigError(
            f"{source}: key '{where}.command' must be a string or a list of strings, got {command!r:.80}",
            hint='e.g. command = ["./notify.sh", "--quiet"]',
        )
    if not isinstance(on, list) or not on or any(e not in ENDINGS for e in on):
        raise ConfigError(
            f"{source}: key '{where}.on' must list run endings, got {on!r:.80}",
            hint=f"use some of: {', '.join(ENDINGS)}",
        )
    env = _parse_env(table.get("env", []), bool(command), source, where, api_key_env)
    return NotifyTarget(index, url, tuple(command), tuple(on), env)


def _parse_env(env: object, command: bool, source: str, where: str, api_key_env: str) -> tuple[str, ...]:
    from openbot.envpolicy import model_key_passed_by

    if env and not command:
        raise ConfigError(f"{source}: key '{where}.env' is for a command", hint="remove it from the webhook")
    if not isinstance(env, list) or not all(isinstance(e, str) and _ENV_RE.match(e) for e in env):
        raise ConfigError(
            f"{source}: key '{where}.env' must list variable names (or PREFIX_*), got {env!r:.80}",
            hint='e.g. env = ["PAGER_TOKEN"]',
        )
    for entry in env:
        if key := model_key_passed_by(entry, api_key_env):
            raise ConfigError(
                f"{source}: key '{where}.env' entry {entry!r} would pass {key}, a model key; "
                "a notify command never gets one",
                hint=f"remove {entry!r} (or list other names exactly)",
            )
    return tuple(env)
