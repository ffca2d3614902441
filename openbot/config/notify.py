"""`[[notify]]` tables: where a run reports how it ended, validated into `NotifyTarget`.

[[notify]]
url = "${SLACK_WEBHOOK_URL}"          # JSON POST of the run summary, with a Slack-compatible `text`
on = ["failed", "limit"]              # which endings; default: every ending

[[notify]]
command = ["./tools/page-me.sh"]      # the summary as JSON on stdin (a string runs with `sh -c`)
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Any

from openbot.config import envrefs
from openbot.errors import ConfigError

ENDINGS = ("completed", "failed", "limit", "interrupted", "refused")
_KEYS = ("url", "command", "on")


@dataclass(frozen=True)
class NotifyTarget:
    index: int  # position in the [[notify]] list, 1-based, for messages
    url: str = ""  # a template: `${NAME}` is expanded at delivery, never shown expanded
    command: tuple[str, ...] = ()
    on: tuple[str, ...] = ENDINGS

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


def parse_targets(value: Any, source: str) -> list[NotifyTarget]:
    if not isinstance(value, list) or not all(isinstance(t, dict) for t in value):
        raise ConfigError(
            f"{source}: key 'notify' must be a list of tables",
            hint="write [[notify]] tables with url or command",
        )
    return [_parse_one(i, table, source) for i, table in enumerate(value, 1)]


def _parse_one(index: int, table: dict[str, Any], source: str) -> NotifyTarget:
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
    return NotifyTarget(index, url, tuple(command), tuple(on))
