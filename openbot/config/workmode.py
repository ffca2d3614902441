"""Which way of working a bot's model gets (`work_mode`, docs/MODELS.md "Work mode"): tool calls, or edits
written in its replies that openbot applies, commits and checks. Small models succeed far more often the
second way (issue 33: 1 of 6 tasks with tools, 5 of 6 as edits on Qwen2.5-Coder-1.5B), so `auto` picks
it for the models likely to be small: a local or OpenAI-compatible server, or a small window."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Literal

from openbot.config.keys import BotConfig
from openbot.config.model_names import parse_model

SMALL_WINDOW = 16_384  # tokens: a window this small leaves no room for tool schemas and a long loop
TOOL_KEYS = ("tools", "tool_protocol")  # set in config.md: the user chose tool calls


@dataclass(frozen=True)
class WorkMode:
    mode: Literal["tools", "edits"]
    why: str

    def tools(self, configured: list[str]) -> list[str]:
        """The built-in tools of the run: in edits, the two openbot acts through (the model calls none)."""
        return ["shell", "edit"] if self.mode == "edits" else configured

    def said(self) -> str:
        return f"work mode: {self.mode} ({self.why})"


def choose(config: BotConfig, set_keys: Collection[str], window: int | None = None) -> WorkMode:
    """The mode and why: `work_mode` when set, else the rule written in docs/MODELS.md. `set_keys`: the
    keys config.md (or a flag) set; `window`: the model's window where the server or catalog says."""
    if config.work_mode == "tools":
        return WorkMode("tools", 'work_mode = "tools" in the config')
    if config.work_mode == "edits":
        return WorkMode("edits", 'work_mode = "edits" in the config')
    name = parse_model(config.model)
    chosen = [k for k in TOOL_KEYS if k in set_keys]
    if chosen:
        return WorkMode("tools", f"auto: {' and '.join(chosen)} set in the config")
    if name.backend == "chat":
        return WorkMode("edits", f"auto: {name.server}: is a local or OpenAI-compatible server")
    size = config.context_window or window or 0
    if 0 < size <= SMALL_WINDOW:
        return WorkMode("edits", f"auto: a context window of {size:,} tokens (16,384 or less)")
    api = {"anthropic": "Claude's API", "openai": "OpenAI's API"}.get(name.backend, "a scripted model")
    window_said = (
        f"a window of {size:,} tokens" if size else "its window is not known to be 16,384 tokens or less"
    )
    return WorkMode("tools", f"auto: {api}, {window_said}")
