"""Shrinking a command's output to what the model needs: the start, the end, and the errors in between.

Small outputs (≤ MAX_BYTES and ≤ MAX_LINES) pass through verbatim. Larger ones keep the first HEAD_LINES,
the last TAIL_LINES and up to ERROR_LINES error-looking lines from the cut part (with their line numbers),
plus a marker naming the full-output file and the `sed -n` range that was cut. `OutputCompactor` is fed
chunks as they arrive and keeps only those windows, so 100 MB of output costs the same memory as 1 MB.
Lines after the head are handled per chunk in C (bytes.count, regex search), never one by one in Python.
"""

from __future__ import annotations

import shlex
from collections import deque
from dataclasses import dataclass

MAX_BYTES = 10_000
MAX_LINES = 200
HEAD_LINES = 60
TAIL_LINES = 80
ERROR_LINES = 40
MAX_LINE_BYTES = 2_000
# Rendered-size budgets keep the result small even when every kept line is long (~16 kB in all).
HEAD_BUDGET, TAIL_BUDGET, ERROR_BUDGET = 4_500, 6_500, 3_500

# Matched case-insensitively, plus pytest's "E " lines. Plain substring search (bytes.find) rather than a
# regex: Python's re scans a case-insensitive alternation at ~8 MB/s, far too slow for 100 MB of output.
ERROR_WORDS = (b"error", b"exception", b"traceback", b"warning", b"panic", b"fatal", b"assert", b"failed")


def is_error_line(data: bytes) -> bool:
    low = data.lower()
    return data.startswith(b"E ") or any(word in low for word in ERROR_WORDS)


def _error_line_starts(buf: bytes, start: int, end: int, need: int) -> list[int]:
    """Offsets in `buf` of the first `need` error-looking lines in buf[start:end] (whole lines).

    Each word contributes at most `need` lines, so the union holds the first `need` overall."""
    low = buf[start:end].lower()
    starts: set[int] = set()
    for word in ERROR_WORDS:
        pos = low.find(word)
        for _ in range(need):
            if pos < 0:
                break
            line_start = low.rfind(b"\n", 0, pos) + 1
            starts.add(start + line_start)
            pos = low.find(word, low.index(b"\n", pos) + 1)
    # buf[start - 1] is always a newline: blocks begin right after one.
    pos = buf.find(b"\nE ", start - 1, end)
    for _ in range(need):
        if pos < 0:
            break
        starts.add(pos + 1)
        pos = buf.find(b"\nE ", pos + 1, end)
    return sorted(starts)[:need]


@dataclass(frozen=True)
class Line:
    number: int
    data: bytes  # at most MAX_LINE_BYTES, without the newline
    size: int  # bytes in the original line, newline included

    def render(self) -> str:
        text = self.data.decode("utf-8", "replace")
        extra = self.size - len(self.data) - 1
        if extra > 0:
            text = text.rstrip("\ufffd") + f" [... line truncated, {extra:,} more bytes]"
        return text


def human_bytes(n: int) -> str:
    for unit, scale in (("MB", 1_000_000), ("kB", 1_000)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


class OutputCompactor:
    """Fed raw output chunk by chunk; `result()` is the text for the model. Memory stays bounded."""

    def __init__(self, full_output_path: str = "") -> None:
        self.full_output_path = full_output_path
        self.total_bytes = 0
        self.total_lines = 0  # complete lines so far (a final unterminated line is added in result())
        self._raw: bytearray | None = bytearray()  # everything, until it is too big to be verbatim
        self._head: list[Line] = []
        self._tail: deque[Line] = deque(maxlen=TAIL_LINES)
        self._errors: list[Line] = []  # error-looking lines after the head (may overlap the tail)
        self._partial = bytearray()  # the current unterminated line, capped at MAX_LINE_BYTES
        self._partial_size = 0

    @property
    def compacted(self) -> bool:
        """True when the model will not see the output verbatim (so the full-output file is worth keeping)."""
        lines = self.total_lines + (1 if self._partial_size else 0)
        return self.total_bytes > MAX_BYTES or lines > MAX_LINES

    def feed(self, chunk: bytes) -> None:
        if not chunk:
            return
        self.total_bytes += len(chunk)
        if self._raw is not None:
            self._raw += chunk
            if len(self._raw) > MAX_BYTES:
                self._raw = None
        first_nl = chunk.find(b"\n")
        if first_nl < 0:
            self._extend_partial(chunk)
            return
        self._extend_partial(chunk[: first_nl + 1])
        self._add_line(Line(self.total_lines + 1, bytes(self._partial), self._partial_size))
        self._partial.clear()
        self._partial_size = 0
        last_nl = chunk.rfind(b"\n")
        pos = first_nl + 1
        # Fill the head one line at a time (at most HEAD_LINES lines), then the rest in bulk.
        while pos <= last_nl and len(self._head) < HEAD_LINES:
            end = chunk.index(b"\n", pos)
            self._add_line(
                Line(self.total_lines + 1, chunk[pos : min(end, pos + MAX_LINE_BYTES)], end - pos + 1)
            )
            pos = end + 1
        if pos <= last_nl:
            self._add_block(chunk, pos, last_nl + 1)
        self._extend_partial(chunk[last_nl + 1 :])

    def _extend_partial(self, data: bytes) -> None:
        room = MAX_LINE_BYTES - len(self._partial)
        if room > 0:
            self._partial += data[:room].rstrip(b"\n")
        self._partial_size += len(data)

    def _add_line(self, line: Line) -> None:
        self.total_lines += 1
        if len(self._head) < HEAD_LINES:
            self._head.append(line)
            return
        self._tail.append(line)
        if len(self._errors) < ERROR_LINES and is_error_line(line.data):
            self._errors.append(line)

    def _add_block(self, buf: bytes, start: int, end: int) -> None:
        """Complete lines buf[start:end] (ending in a newline), all after the head."""
        first_number = self.total_lines + 1
        need = ERROR_LINES - len(self._errors)
        if need > 0:
            for line_start in _error_line_starts(buf, start, end, need):
                line_end = buf.index(b"\n", line_start, end)
                number = first_number + buf.count(b"\n", start, line_start)
                data = buf[line_start : min(line_end, line_start + MAX_LINE_BYTES)]
                self._errors.append(Line(number, data, line_end - line_start + 1))
        count = buf.count(b"\n", start, end)
        # Only the last TAIL_LINES lines of the block can survive in the tail window.
        cut = end - 1
        for _ in range(min(count, TAIL_LINES)):
            cut = buf.rfind(b"\n", start, cut)
        tail_start = cut + 1 if cut >= start else start
        number = first_number + count - min(count, TAIL_LINES)
        pos = tail_start
        while pos < end:
            nl = buf.index(b"\n", pos, end)
            self._tail.append(Line(number, buf[pos : min(nl, pos + MAX_LINE_BYTES)], nl - pos + 1))
            number += 1
            pos = nl + 1
        self.total_lines += count

    def _finish_partial(self) -> None:
        if self._partial_size:
            # The size counts a newline that is not there, so Line.render's arithmetic stays uniform.
            self._add_line(Line(self.total_lines + 1, bytes(self._partial), self._partial_size + 1))
            self._partial.clear()
            self._partial_size = 0

    def result(self) -> str:
        """The text the model sees; call once, after the last chunk."""
        self._finish_partial()
        if not self.compacted and self._raw is not None:
            return self._raw.decode("utf-8", "replace")
        return self._render()

    def _render(self) -> str:
        head = _fit(self._head, HEAD_BUDGET, from_end=False)
        # Head lines that did not fit may still be shown as the end (a short output of long lines).
        tail = _fit([*self._head[len(head) :], *self._tail], TAIL_BUDGET, from_end=True)
        where = self.full_output_path or "(not saved)"
        quoted = shlex.quote(where)
        out = [line.render() for line in head]
        cut_from = head[-1].number + 1 if head else 1
        cut_to = tail[0].number - 1 if tail else self.total_lines
        if cut_from <= cut_to:
            shown = sum(line.size for line in head) + sum(line.size for line in tail)
            cut_bytes = max(self.total_bytes - shown, 0)
            out.append(
                f"[... {cut_to - cut_from + 1:,} lines ({human_bytes(cut_bytes)}) cut; full output: {where}"
                f" — read it with sed -n '{cut_from},{cut_to}p' {quoted} (or grep -n PATTERN {quoted})]"
            )
            errors = self._cut_errors(cut_from, cut_to)
            if errors:
                more = " (the first ones)" if len(errors) >= ERROR_LINES else ""
                out.append(f"[error-looking lines in the cut part{more}, with line numbers:]")
                out.extend(f"{line.number}: {line.render()}" for line in errors)
                out.append("[... end of the cut part]")
        else:
            out.append(f"[long lines were truncated; full output ({human_bytes(self.total_bytes)}): {where}]")
        out.extend(line.render() for line in tail)
        return "\n".join(out)

    def _cut_errors(self, cut_from: int, cut_to: int) -> list[Line]:
        candidates = [*self._head, *self._errors, *self._tail]
        seen: set[int] = set()
        picked: list[Line] = []
        for line in sorted(candidates, key=lambda x: x.number):
            if cut_from <= line.number <= cut_to and line.number not in seen and is_error_line(line.data):
                seen.add(line.number)
                picked.append(line)
        return _fit(picked[:ERROR_LINES], ERROR_BUDGET, from_end=False)


def _fit(lines: list[Line], budget: int, from_end: bool) -> list[Line]:
    """As many lines as fit in `budget` rendered characters, from the start (or the end); at least one."""
    order = reversed(lines) if from_end else iter(lines)
    kept: list[Line] = []
    used = 0
    for line in order:
        used += len(line.render()) + 1
        if kept and used > budget:
            break
        kept.append(line)
    return kept[::-1] if from_end else kept


def compact_output(output: str | bytes, full_output_path: str = "") -> str:
    """Compact a whole output at once (the shell tool streams through OutputCompactor instead)."""
    compactor = OutputCompactor(full_output_path)
    compactor.feed(output.encode() if isinstance(output, str) else output)
    return compactor.result()
