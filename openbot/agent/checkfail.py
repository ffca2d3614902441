"""What a failed check tells a small model (work_mode "edits"): the output's end, bounded, then the error
on a line of its own and the repository's line it points at, with its neighbours — where a 1.5B model,
given only a traceback's tail, answered with advice, or rewrote the wrong file.

    the error     the last line that names an exception (`ImportError: ...`, pytest's `E   assert ...`)
    the place     the last traceback frame (`File "x.py", line 3`, pytest's `x.py:3:`) in a file of the
                  checkout: the failing assertion of a test, or the source line that raised
"""

from __future__ import annotations

import re
from pathlib import Path

from openbot.files import read_text_capped

TAIL_CHARS = 2_000  # the end of the output, where test runners say what failed
_FRAME = re.compile(r'File "([^"]+)", line (\d+)|^([\w./-]+\.py):(\d+):', re.M)
_ERROR = re.compile(r"^(?:E\s+)?((?:[\w.]+\.)?\w*(?:Error|Exception|Failure|Exit)\b.*|E\s+assert\b.*)$")


def explain(error: str, root: Path, spot: tuple[str, int] | None) -> str:
    """The lines after a failed check's output: its error (`error_of`'s answer) and the place (`place`'s),
    "" when neither is found."""
    parts = [f"The error: `{error}`"] if error else []
    if spot:
        path, number = spot
        parts.append(f"It points at {path} line {number}:\n```\n{_around(root, path, number)}\n```")
    return "\n".join(parts)


def error_of(output: str) -> str:
    """The last line of a failed check's output that names an exception ("" when none does)."""
    lines = [line.strip() for line in output.splitlines()]
    errors = [line.removeprefix("E").strip() for line in lines if _ERROR.match(line)]
    return errors[-1][:300] if errors else ""


def kind_of(error: str) -> str:
    """An error's kind: `TypeError` of `TypeError: unsupported operand ...`."""
    return error.split(":", 1)[0].strip()


def tail(text: str, limit: int = TAIL_CHARS) -> str:
    text = text.strip("\n")
    return text if len(text) <= limit else "[...]\n" + text[-limit:]


def place(output: str, root: Path, files: set[str]) -> tuple[str, int] | None:
    """The last frame in a file of the checkout (a path as the sandbox wrote it, made relative)."""
    found = None
    base = str(root.resolve()).rstrip("/") + "/"
    for m in _FRAME.finditer(output):
        raw, number = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        path = raw.removeprefix(base).removeprefix(str(root).rstrip("/") + "/").removeprefix("./")
        if path not in files:  # an absolute path elsewhere: the checkout's file with that ending
            ends = [f for f in files if raw.endswith("/" + f)]
            path = max(ends, key=len) if ends else ""
        if path:
            found = (path, int(number))
    return found


def _around(root: Path, path: str, number: int, context: int = 2) -> str:
    try:
        text, _ = read_text_capped(root / path, root=root.resolve(), limit=1 << 20)
    except Exception:  # gone or unreadable since the check ran: the place is still named
        return "(not readable)"
    lines = text.splitlines()
    start, end = max(number - 1 - context, 0), min(number + context, len(lines))
    width = len(str(end))
    return "\n".join(
        f"{'>' if n == number else ' '}{n:>{width}} | {lines[n - 1]}" for n in range(start + 1, end + 1)
    )
