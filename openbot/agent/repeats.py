"""The repeat guard: an identical call made again is answered from its known result, not run again.

A small model that is lost repeats one call (often a `git commit` before any edit) until something stops
it; running it again costs a command and tells the model nothing new. So the same calls in consecutive
replies are answered from the result the first of them got, with a direction to do something different,
and at `max_repeats` in a row the turn ends `stuck`, its reason naming the call that did not help.

"Nothing changed since" is known by position: nothing ran between the two replies (no other call, no
typed input from the user), so the checkout is as the first call left it and its result still stands.
Calls whose answer is not in the checkout always run: an MCP server's tool (its server's state) and
session_complete (openbot's own check of the work).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from openbot.events import EventSink, Notice
from openbot.state.messages import ToolResultBlock, ToolUseBlock

DIRECTION = (
    "[openbot] Not run again: you made this same call just before and nothing has changed since "
    "({n} times in a row now). Its result then was:\n{result}\n[openbot] Repeating it will not help: "
    "do something different — read the file, edit it, or call session_complete."
)
SHOWN_CHARS = 120  # of the repeated call, in the turn's `stuck` reason


def signature(uses: list[ToolUseBlock]) -> str:
    return json.dumps([[t["name"], t["input"]] for t in uses], sort_keys=True)


def _answerable(use: ToolUseBlock) -> bool:
    return use["name"] != "session_complete" and "__" not in use["name"]  # `<server>__<tool>`: MCP


def described(uses: list[ToolUseBlock]) -> str:
    """The calls in a line: `shell: git commit -am x`."""
    parts = []
    for use in uses:
        arg = use["input"].get("command", "") if isinstance(use["input"], dict) else ""
        text = arg if isinstance(arg, str) and arg else json.dumps(use["input"], sort_keys=True)
        parts.append(f"{use['name']}: {' '.join(text.split())}")
    line = "; ".join(parts)
    return line if len(line) <= SHOWN_CHARS else line[: SHOWN_CHARS - 1] + "…"


@dataclass
class Repeats:
    """The calls of the last reply, how many replies in a row made them, and the results they got."""

    limit: int
    last: str = ""
    count: int = 0
    known: list[ToolResultBlock] = field(default_factory=list)

    def see(self, uses: list[ToolUseBlock]) -> bool:
        """Count these calls; True when they are to be answered from the known results."""
        sig = signature(uses)
        self.count = self.count + 1 if sig == self.last else 1
        self.last = sig
        return self.count > 1 and len(self.known) == len(uses) and all(map(_answerable, uses))

    def remember(self, results: list[ToolResultBlock]) -> None:
        self.known = list(results)

    def forget(self) -> None:
        """Something changed (the user typed a line): the next call runs, whatever it is."""
        self.last, self.count, self.known = "", 0, []

    def answers(self, uses: list[ToolUseBlock], sink: EventSink) -> list[ToolResultBlock]:
        """The known results, each with the direction; said in a `repeated_call` notice."""
        message = f"the same call again ({self.count} in a row): answered from its known result, not run"
        data = {"repeats": self.count, "tools": [t["name"] for t in uses]}
        sink.emit(Notice(kind="repeated_call", message=message, data=data))
        out: list[ToolResultBlock] = []
        for use, was in zip(uses, self.known, strict=True):
            content = was["content"]
            text = content if isinstance(content, str) else "\n".join(b["text"] for b in content)
            block: ToolResultBlock = {
                "type": "tool_result",
                "tool_use_id": use["id"],
                "content": DIRECTION.format(n=self.count, result=text),
            }
            if was.get("is_error"):
                block["is_error"] = True
            out.append(block)
        return out

    def stuck(self, uses: list[ToolUseBlock]) -> str:
        """The `stuck` reason when the limit is reached ("" before): what was repeated, and that it did
        not help, so the next iteration is not invited to make the same call again."""
        if self.count < self.limit:
            return ""
        return (
            f"the same tool call was repeated {self.count} times and did not help ({described(uses)}); "
            "it ran once, the repeats were answered with its result: do something different"
        )
