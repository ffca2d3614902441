"""What work_mode "edits" reads and runs (agent/editmode.py): a file's text as it is now, a shell tool
call's exit code, first line and output, the commit command."""

from __future__ import annotations

import re
import shlex

from openbot.agent.checkfail import tail
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


def line_at(text: str | None, number: int) -> str:
    """Line `number` (1-based) of `text`, stripped; "" when there is none."""
    lines = (text or "").splitlines()
    return lines[number - 1].strip() if 0 < number <= len(lines) else ""


def commit_command(paths: list[str], message: str) -> str:
    """Commit `paths` with `message` (hooks off) and print the commit's short sha."""
    quoted = " ".join(shlex.quote(p) for p in paths)
    return (
        f"git add -A -- {quoted} && git -c core.hooksPath=/dev/null commit -q -m {shlex.quote(message)}"
        " && git log -1 --format=%h"
    )


def ran(commands: list[str], out: ToolOutput) -> str:
    """What the model is told of its first ```sh block's run (later ones are not run)."""
    later = f"\n(only the first ```sh block runs: {len(commands) - 1} more not run)" if commands[1:] else ""
    return f"[openbot] ran `{short(commands[0])}`: {head(out)}\n{tail(body(out))}{later}"
