"""Hiding secrets in everything openbot writes or shows: event lines, conversation files, the live view.

Two sources: the values of secret-looking environment variables (the model keys in `envpolicy.NEVER` and
every name that `envpolicy.is_secret_name` flags), and the shapes of common API keys, which catch keys
that never were in the environment (a token the agent found in a file). Both are precompiled regexes, run
only on text that contains a literal secret or a key prefix, so redacting every event line stays cheap.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from openbot.envpolicy import NEVER, is_secret_name

REDACTED = "[REDACTED]"
MIN_SECRET_CHARS = 8  # shorter values ("1", "true") would redact ordinary text everywhere
MAX_CARRIED_LINE = 1 << 20  # a longer unfinished line is redacted in pieces (a secret may then straddle two)


def _key(prefix: str, rest: str) -> str:
    # A key must start at a token boundary: "task-runner-…" must not be read as an "sk-" key. The check
    # comes after the prefix, so each pattern starts with a literal and re skips ahead to it: ~10x faster
    # than a leading lookbehind on output full of "task-" or "disk-".
    return rf"{prefix}(?<![A-Za-z0-9_\-]{prefix}){rest}"


KEY_SHAPES = (
    _key("sk-ant-", r"[A-Za-z0-9_\-]{10,}"),
    _key("sk-", r"[A-Za-z0-9_\-]{20,}"),
    _key("gh[pousr]_", r"[A-Za-z0-9]{20,}"),
    _key("github_pat_", r"[A-Za-z0-9_]{20,}"),
    _key("AKIA", r"[0-9A-Z]{16}(?![0-9A-Z])"),
    _key("xox[abprs]-", r"[A-Za-z0-9\-]{10,}"),
)
_SHAPES_RE = re.compile("|".join(KEY_SHAPES))
# Substrings every KEY_SHAPES match contains; text without any of them (and without a literal secret) is
# returned untouched, which is the common case and skips the slow regex scan.
_SHAPE_MARKERS = ("sk-", "ghp_", "gho_", "ghs_", "ghu_", "ghr_", "github_pat_", "AKIA", "xox")


class Redactor:
    """`redact(text)` replaces every known secret value and key-shaped string with [REDACTED]."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        literals: set[str] = set()
        for value in secrets:
            if len(value) >= MIN_SECRET_CHARS:
                literals.add(value)
                # Event lines are redacted after JSON encoding, where a value with quotes, backslashes
                # or control characters appears escaped.
                literals.add(json.dumps(value, ensure_ascii=False)[1:-1])
        self._literals = tuple(literals)
        # Longest first, so a secret that contains another is replaced whole.
        ordered = sorted(literals, key=len, reverse=True)
        self._literals_re = re.compile("|".join(map(re.escape, ordered))) if ordered else None

    @classmethod
    def from_env(cls, environ: Mapping[str, str], also: Iterable[str] = ()) -> Redactor:
        """Secret-looking variables' values, plus `also` (what the config's `${NAME}` references give)."""
        return cls([*(v for k, v in environ.items() if k in NEVER or is_secret_name(k)), *also])

    def redact(self, text: str) -> str:
        # `in` is a fast C substring search; each regex scans only text it may match.
        if self._literals_re is not None and any(v in text for v in self._literals):
            text = self._literals_re.sub(REDACTED, text)
        if any(m in text for m in _SHAPE_MARKERS):
            text = _SHAPES_RE.sub(REDACTED, text)
        return text

    def redact_obj(self, obj: object) -> Any:
        """A copy of a JSON-like value (dicts, lists, strings) with every string redacted."""
        if isinstance(obj, str):
            return self.redact(obj)
        if isinstance(obj, dict):
            return {k: self.redact_obj(v) for k, v in obj.items()}
        if isinstance(obj, list | tuple):
            return [self.redact_obj(v) for v in obj]
        return obj


class StreamRedactor:
    """Redacts a byte stream (a command's output) line by line, so a secret split across two reads is
    still found whole: the unfinished last line of each chunk waits for the next one.

    Bytes that are not UTF-8 pass through unchanged (surrogateescape), so the output stays byte-exact
    apart from the redactions. A secret that itself spans a newline is not found (each line is separate).
    """

    def __init__(self, redact: Callable[[str], str], max_line: int = MAX_CARRIED_LINE) -> None:
        self._redact = redact
        self._max_line = max_line
        self._carry = b""

    def feed(self, data: bytes) -> bytes:
        """The redacted complete lines so far (b"" while the first line is still unfinished)."""
        buf = self._carry + data if self._carry else data
        end = buf.rfind(b"\n") + 1
        if len(buf) - end > self._max_line:  # a huge unfinished line: stop waiting for its end
            end = len(buf)
        self._carry = buf[end:]
        return self._apply(buf[:end]) if end else b""

    def flush(self) -> bytes:
        """The redacted rest (an unterminated last line); call once, at the end of the stream."""
        rest, self._carry = self._carry, b""
        return self._apply(rest) if rest else b""

    def _apply(self, data: bytes) -> bytes:
        text = data.decode("utf-8", "surrogateescape")
        redacted = self._redact(text)
        # The common case (nothing to hide) skips re-encoding: Redactor.redact returns its argument.
        return data if redacted is text else redacted.encode("utf-8", "surrogateescape")
