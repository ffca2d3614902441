"""Whole files a model wrote for files that exist (work_mode "edits"): when one is written, added to, or
refused. The rule, as docs/MODELS.md says it:

- **not seen, not replaced**: an existing file the model has not seen whole (not in its first message, not
  written by it, not shown it since) is not replaced by a whole file — that would drop lines it never
  read. The file is shown (when it fits) and the model asked for SEARCH/REPLACE blocks, or the file again
  now that it has read it.
- **nothing kept, added**: a whole file that keeps none of the non-blank lines of an existing file of two or
  more, and has no line like one of them (difflib's ratio under 0.6: a rename is a change), is a small
  model writing only what it adds (a `.gitignore` line): it is added at the file's end, and said; the
  same file sent again replaces the old one, as the model then means it.
- **functions, put in place**: a Python file's functions sent alone replace those of their names
  (agent/splice.py), seen or not: each was written whole.
- **part of a Python file, not written**: a block for an existing `.py` file whose first line is
  indented is lines of it (a 1.5B model echoed the lines openbot showed it), not the file: written whole
  it replaced a 158-line module with 9 lines.
- **cut off, not written**: a whole file or a REPLACE whose block never closed (the reply ended at its
  output limit) is not written: half a file would replace a whole one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from difflib import SequenceMatcher

from openbot.agent.edits import Edit
from openbot.agent.splice import splice

SPLICED = "functions put in place"
LOST = "are gone"
SIMILAR = 0.6  # a new line this like an old one is that line changed, not an addition
SHOW_CHARS = 6_000  # an unseen file shown whole up to this (~1,500 tokens), else named with how to read it
PART = (
    "its first line is indented, so this is part of the file, not all of it (a whole file would drop the "
    "rest). Send a function whole, or the lines to change as SEARCH/REPLACE."
)
SEARCH_HOW = (
    "To change part of it, write its path, then only the lines to change:\n"
    "<<<<<<< SEARCH\n(the exact lines now in the file)\n=======\n(the new lines)\n>>>>>>> REPLACE"
)


@dataclass
class WholeFiles:
    """What the model has seen of the checkout's files, and the additions it may confirm as replacements."""

    seen: set[str] = field(default_factory=set)
    added: dict[str, str] = field(default_factory=dict)  # path -> the whole file taken as an addition

    def judge(self, path: str, before: str | None, edit: Edit) -> tuple[str | None, str]:
        """(the file's new text, what to say of it) for a whole file or a cut edit; (None, why) when it
        is not written. A search/replace edit that is not cut is (None, "") — not this module's."""
        if edit.cut:
            return None, (
                "your reply ended before the block closed (the reply's length limit?), "
                "and a part of a file is not written. Send only the lines to change. " + SEARCH_HOW
            )
        if edit.search is not None:
            return None, ""
        spliced = splice(before, edit.text) if before is not None and path.endswith(".py") else None
        if spliced is not None:  # the functions it changes, each put in place (agent/splice.py)
            return spliced.text, f"{SPLICED}: {', '.join(spliced.names)}"
        if before is not None and path.endswith(".py") and _indented(edit.text):
            return None, PART
        if before is None or path in self.seen and not _kept_nothing(before, edit.text):
            return edit.text, ""
        if path not in self.seen:
            return None, self._unseen(path, before)
        if self.added.get(path) == edit.text:  # sent again: the model means the file as written
            return edit.text, ""
        self.added[path] = edit.text
        old = len([line for line in before.splitlines() if line.strip()])
        sep = "" if before.endswith("\n") or not before else "\n"
        return before + sep + edit.text, (
            f"added at its end: your file kept none of its {old} lines, so they stay "
            "(to replace the whole file with yours, send it again)"
        )

    def _unseen(self, path: str, before: str) -> str:
        why = "you have not seen this file, and a whole file replaces every line of it."
        if len(before) > SHOW_CHARS:
            return f"{why} It is long: read the part you need with `sed -n 1,80p {path}`. {SEARCH_HOW}"
        self.seen.add(path)
        fence = "````" if "```" in before else "```"
        return (
            f"{why} It holds:\n{path}\n{fence}\n{before.rstrip(chr(10))}\n{fence}\n"
            f"Send the whole file again with the lines it keeps, or: {SEARCH_HOW}"
        )


def _indented(text: str) -> bool:
    first = next((line for line in text.splitlines() if line.strip()), "")
    return first[:1] in (" ", "\t")


def _kept_nothing(before: str, after: str) -> bool:
    """No line of `after` is, or resembles, a line of `before` (a rename changes every line it touches,
    and is no addition: `from util import calc_total` → `compute_total`)."""
    old = {line.strip() for line in before.splitlines() if line.strip()}
    new = {line.strip() for line in after.splitlines() if line.strip()}
    if len(old) < 2 or not new or old & new or len(old) * len(new) > 20_000:
        return False
    return not any(SequenceMatcher(None, a, b).ratio() >= SIMILAR for a in new for b in old)


def lost(before: str | None, after: str) -> str:
    """What a whole file dropped of the old one, when it is most of it (a model that wrote only the line
    it adds): said, so that the model can send the whole file again. A one-line file's line replaced is
    a change, not a loss: offered as an addition, a 1.5B model took it ("Hello" kept beside "Goodbye")."""
    old = [line for line in (before or "").splitlines() if line.strip()]
    gone = [line for line in old if line not in after.splitlines()]
    if len(old) < 2 or not gone or len(gone) * 2 <= len(old):
        return ""
    shown = ", ".join(f"`{line.strip()[:60]}`" for line in gone[:5]) + (", ..." if gone[5:] else "")
    return f"; {len(gone)} of its {len(old)} lines {LOST} ({shown}): a whole file replaces all of the old one"
