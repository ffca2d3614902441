"""The lines around a failing line of code (work_mode "edits"), shown to a small model that sent the file or
the function back unchanged, and put back in place when it sends them changed.

isodate ad4e50bd7c: shown `parse_time` whole (49 lines, a 17-line docstring) and the `TypeError` of its
line `microsecond = (second - int(second)) * 1e6`, a 1.5B model sent the function back unchanged five
times, each ~580 tokens (~28 s) of output on a ~5,000-token conversation; asked with the lines around it
alone, a try is ~5 s, and the one fix it wrote by hand (`* Decimal('1e6')`, 1 of 37 samples) came as a
fenced block with no path. So the lines are shown without numbers (a copy is the code), and a block —
after the file's path or after no path — whose first and last lines are two of the shown lines (or one
of them is, and the change is on the other) is the lines between changed: it replaces them, re-indented
when the model dropped their indentation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from openbot.agent.edits import Edit
from openbot.agent.editwords import CHANGE_EXCERPT, NARROW
from openbot.agent.focus import Focus
from openbot.agent.repomap import is_test

CONTEXT = 4  # lines shown either side of the failing one (within its function)
SLACK = 3  # lines a block matched by one end may add to what was shown


@dataclass(frozen=True)
class Excerpt:
    path: str
    line: int  # the failing line, 1-based
    start: int  # the first line shown, 1-based
    text: str  # the lines start.. as in the file, each ending in "\n"

    @property
    def end(self) -> int:
        return self.start + self.text.count("\n") - 1

    def failing(self) -> str:
        """The failing line's text, stripped."""
        lines = self.text.splitlines()
        at = self.line - self.start
        return lines[at].strip() if 0 <= at < len(lines) else ""

    def shown(self) -> str:
        fence = "````" if "```" in self.text else "```"
        return (
            f"Lines {self.start}-{self.end} of {self.path} (the error is on line {self.line}):\n"
            f"{self.path}\n{fence}python\n{self.text.rstrip()}\n{fence}"
        )

    def ask(self) -> str:
        return CHANGE_EXCERPT.format(path=self.path, line=self.line, start=self.start, end=self.end)

    def narrowed(self, error: str, name: str, task: str) -> str:
        """The whole message a narrowed conversation starts from: the failing line as a traceback shows it
        with `error`, these lines, the task (`name`: the function the line is in, "" when unknown)."""
        where = {"path": self.path, "line": self.line, "name": f", in {name}" if name else ""}
        return NARROW.format(
            **where, code=self.failing(), error=error, lines=self.shown(), task=task, ask=self.ask()
        )

    def takes(self, block: str) -> bool:
        """`block` is some of the shown lines, changed or not (and holds no fence: not a file's path and
        block inside one)."""
        lines = _stripped(block)
        return (
            not any(line.startswith(("```", "~~~")) for line in lines)
            and _span(_stripped(self.text), lines) is not None
        )

    def put(self, before: str, block: str) -> str | None:
        """`before` with shown lines replaced by `block`, when `block` is some of them changed (`_span`)
        and they are still in the file (where shown, or once elsewhere: an edit above them moved them);
        `before` itself when it is them unchanged; else None."""
        lines = before.splitlines(keepends=True)
        start = self.start
        if "".join(lines[start - 1 : self.end]) != self.text:  # moved by an edit above it in the reply?
            at = [i for i in range(len(lines)) if "".join(lines[i : i + self.end - start + 1]) == self.text]
            if len(at) != 1:
                return None
            start = at[0] + 1
        shown = self.text.splitlines(keepends=True)
        span = _span(_stripped(self.text), _stripped(block))
        if span is None:
            return None
        first, last = span
        old = "".join(shown[first : last + 1])
        if _kept(block) == _kept(old):  # sent back as shown: nothing changed
            return before
        new = block.splitlines(keepends=True)
        shift = _indent(old)[: max(len(_indent(old)) - len(_indent(block)), 0)]
        new = [shift + line if line.strip() else line for line in new]
        new[-1] = new[-1] if new[-1].endswith("\n") else new[-1] + "\n"
        return "".join([*lines[: start - 1 + first], *new, *lines[start + last :]])


def put_edit(shown: Excerpt | None, path: str, before: str | None, edit: Edit) -> str | None:
    """The file with the shown lines replaced, when `edit` is those lines changed; else None."""
    if shown is None or path != shown.path or before is None or edit.search is not None or edit.cut:
        return None
    return shown.put(before, edit.text)


def around(place: str, read: Callable[[str], str | None], line: int, about: Focus | None) -> Excerpt | None:
    """The lines around the failing `line` of `place` when it is the code's (not a test's: only then is it
    `read`), within the function `about` when that is the one shown."""
    text = read(place) if place.endswith(".py") and not is_test(place) else None
    if not text:
        return None
    inside = about if about and about.path == place and about.text else None
    first, last = (inside.first, inside.first + inside.text.count("\n") - 1) if inside else (1, 0)
    return excerpt(place, text, line, first, last)


def excerpt(path: str, text: str, line: int, first: int = 1, last: int = 0) -> Excerpt | None:
    """The lines around `line` of `path`'s `text`, kept within `first`..`last` (its function's lines; 0:
    the end), without blank lines at either end; None when `line` is not in the text or is blank."""
    lines = text.splitlines(keepends=True)
    last = min(last or len(lines), len(lines))
    if not first <= line <= last or not lines[line - 1].strip():
        return None
    start, end = max(line - CONTEXT, first), min(line + CONTEXT, last)
    while start < line and (not lines[start - 1].strip() or _deeper(lines[start - 1], lines[start:line])):
        start += 1  # not from a blank line, nor from the end of a statement begun above (`    tzinfo)`)
    while not lines[end - 1].strip():
        end -= 1
    chunk = lines[start - 1 : end]
    chunk[-1] = chunk[-1] if chunk[-1].endswith("\n") else chunk[-1] + "\n"
    return Excerpt(path, line, start, "".join(chunk))


def _stripped(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines()]


def _kept(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def _span(shown: list[str], block: list[str]) -> tuple[int, int] | None:
    """The shown lines (indexes, stripped) `block` (stripped) stands for: from the line its first
    non-blank line is to the line its last one is — or, when only one of the two is a shown line (the
    change is on the other), as many lines as it has from there, within what was shown, when it has at
    most SLACK lines more. None otherwise."""
    kept = [line for line in block if line]
    if len(kept) < 2:
        return None
    first = next((i for i, line in enumerate(shown) if line == kept[0]), None)
    last = next((i for i in range(len(shown) - 1, -1, -1) if shown[i] == kept[-1]), None)
    if first is not None and last is not None and first < last:
        return first, last
    count = len(block) - next(i for i, line in enumerate(block) if line)
    count -= next(i for i, line in enumerate(reversed(block)) if line)
    if count > len(shown) + SLACK:  # far more than was shown: a whole file or function, not these lines
        return None
    if first is not None:  # to the end of what was shown at most: lines it adds lengthen the block
        return first, min(first + count, len(shown)) - 1
    if last is not None:
        return max(last - count + 1, 0), last
    return None


def _deeper(line: str, after: list[str]) -> bool:
    """`line` is indented more than the next non-blank line: the tail of a statement, not a start."""
    following = next((a for a in after if a.strip()), line)
    return len(line) - len(line.lstrip()) > len(following) - len(following.lstrip())


def _indent(text: str) -> str:
    first = next((line for line in text.splitlines() if line.strip()), "")
    return first[: len(first) - len(first.lstrip())]
