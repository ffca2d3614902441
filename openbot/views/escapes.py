"""Agent-controlled text made safe for a terminal: control characters shown, never interpreted.

Model text, command output and everything stored from them (events, metadata, memory) may carry escape
sequences: OSC 52 writes the user's clipboard, cursor movement and `\\r` overwrite what the user already
read, bidi overrides reorder it. Every renderer passes such text through `visible` on its way out, which
spells each of those characters as an escape (`\\x1b`, `\\r`, `\\u202e`); `\\n` and `\\t` stay as they are.
The mapping is per character, so text streamed in chunks is safe however it is cut.
"""

from __future__ import annotations

import re

# C0 but \t and \n, DEL, C1, and the bidi embeddings/overrides (U+202A–U+202E) and isolates (U+2066–U+2069).
_UNSAFE = "\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069"
_UNSAFE_RE = re.compile(f"[{_UNSAFE}]")
_SPACE = re.compile(r"\s")
LONGEST_WORD = 200  # a first word longer than a summary's width is kept whole up to this
_JSON_UNSAFE_RE = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069]")  # json.dumps escapes C0 itself


def _spell(char: str) -> str:
    code = ord(char)
    if char == "\r":
        return "\\r"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def visible(text: str) -> str:
    """`text` with every terminal control character spelled out; CRLF counts as a plain line end."""
    if not _UNSAFE_RE.search(text):
        return text
    return _UNSAFE_RE.sub(lambda m: _spell(m.group()), text.replace("\r\n", "\n"))


def one_line(text: str, width: int) -> str:
    """`text` on one line (whitespace runs become one space), cut to `width` with an ellipsis."""
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def shorten(text: str, width: int) -> str:
    """A summary or reason on one line, cut to `width` as `clip` cuts it."""
    return clip(" ".join(text.split()), width)


def clip(text: str, width: int) -> str:
    """`text` cut to `width` with an ellipsis at a word boundary: never inside a word, so never inside
    the branch name, run id, path or URL it names. A first word longer than `width` is kept whole (up to
    LONGEST_WORD characters), rather than cut."""
    if len(text) <= width:
        return text
    spaces = [m.start() for m in _SPACE.finditer(text, 0, width)]
    cut = spaces[-1] if spaces and spaces[-1] > 0 else None
    if cut is None:
        first = _SPACE.search(text)
        cut = min(first.start() if first else len(text), LONGEST_WORD)
        if cut >= len(text):
            return text
    return text[:cut].rstrip() + "…"


def visible_json(document: str) -> str:
    """A `json.dumps(..., ensure_ascii=False)` document with the characters JSON leaves raw (DEL, C1, bidi)
    written as `\\uXXXX` escapes: still valid JSON with the same data, and inert on a terminal.

    Outside strings JSON has only ASCII punctuation, so every such character is inside a string."""
    return _JSON_UNSAFE_RE.sub(lambda m: f"\\u{ord(m.group()):04x}", document)
