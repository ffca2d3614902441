"""What work_mode "edits" reads (agent/editmode.py): a file's text as it is now, and a shell tool call's
exit code, first line and output."""

from __future__ import annotations

import re

from openbot.agent.tools.base import ToolContext, ToolOutput
from openbot.agent.tools.editor import resolve_inside
from openbot.files import read_text_capped

READ_LIMIT = 1 << 20


def current(ctx: ToolContext, path: str) -> str | None:
    """The file's text now, None when it does not exist (or cannot be read as text)."""
    try:
        target = resolve_inside(ctx.workdir, path)
        text, _ = read_text_capped(target, root=ctx.workdir.resolve(), limit=READ_LIMIT)
    except Exception:  # outside the checkout, a directory, binary: the edit tool says why on writing
        return None
    return text


def exit_code(out: ToolOutput) -> int | None:
    m = re.match(r"exit code: (-?\d+)", out.content)
    return int(m.group(1)) if m and not out.is_error else None


def head(out: ToolOutput) -> str:
    return out.content.split("\n", 1)[0]


def body(out: ToolOutput) -> str:
    return out.content.split("\n", 1)[1] if "\n" in out.content else ""


def short(command: str) -> str:
    return command if len(command) <= 120 else command[:117] + "..."
