"""How large a bot's prompt is before it does anything: its system prompt and its tool schemas, in estimated
tokens (`openbot bots show`). A small local model reads every token of it before its first reply (a CPU
server at 35-50 tokens a second here), and its window holds little else."""

from __future__ import annotations

from dataclasses import dataclass

from openbot.agent.context import estimate_tokens
from openbot.agent.prompt import PromptParts, system_prompt
from openbot.agent.textprompt import tools_prompt
from openbot.agent.tools.registry import default_tools, tool_specs
from openbot.config.keys import BotConfig
from openbot.config.skills import shipped_skills


@dataclass(frozen=True)
class PromptSize:
    system: int  # the system prompt: instructions, shipped skills, the operating prompt (+ tools, "text")
    tools: int  # the tool schemas sent with every call (0 with tool_protocol = "text")
    mode: str = "tools"  # work_mode: in "edits" the first message holds the task's files

    @property
    def total(self) -> int:
        return self.system + self.tools

    def said(self) -> str:
        more = "the task's files" if self.mode == "edits" else "MCP tools and each iteration's status"
        return (
            f"~{self.total:,} tokens before any work (system prompt ~{self.system:,} + tool schemas "
            f"~{self.tools:,}; an estimate at 4 characters a token. The repository's AGENTS.md, its skills, "
            f"{more} come on top)"
        )


def prompt_size(config: BotConfig, instructions: str, mode: str = "tools") -> PromptSize:
    """The size in `mode` (config/workmode.py): "edits" sends no tools and describes none."""
    specs = tool_specs(default_tools(config.command_timeout_secs, config.tools))
    text = config.tool_protocol == "text" and mode == "tools"
    parts = PromptParts(
        instructions,
        shipped_skills(config.shipped_skills),
        tool_text=tools_prompt(specs) if text else "",
        tool_names=tuple(s.name for s in specs),
        mode=mode,
    )
    # estimate_tokens counts JSON: the system prompt as one string, the schemas as the API is sent them
    tools = 0 if text or mode == "edits" else estimate_tokens([s.to_api() for s in specs])
    return PromptSize(estimate_tokens(system_prompt(parts)), tools, mode)
