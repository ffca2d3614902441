"""Server-sent events read from raw bytes exactly as the `anthropic` and `openai` SDKs read them.

Lines end at CR, LF or CRLF only. Python's `str.splitlines()` (and httpx2's `iter_lines()`) also break at
U+2028, U+2029, U+0085 and a few control characters, which valid JSON may carry raw: a frame holding one
would be cut in two and could never be received. Comment lines (`:` …) are keep-alives some servers and
proxies send; they are reported as `KEEPALIVE` frames so a caller can tell liveness from progress.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

KEEPALIVE = ":"  # the "event" of a comment line
_EOL = re.compile(rb"\r\n|\r|\n")


def lines(chunks: Iterable[bytes]) -> Iterator[str]:
    """The lines of a byte stream (without their ends), however the bytes were chunked."""
    pending = b""
    for chunk in chunks:
        data = pending + chunk
        held = data.endswith(b"\r")  # maybe the first half of a CRLF split across chunks
        *done, pending = _EOL.split(data[:-1] if held else data)
        if held:
            pending += b"\r"
        for line in done:
            yield line.decode("utf-8", errors="replace")
    *done, last = _EOL.split(pending)
    for line in done + ([last] if last else []):
        yield line.decode("utf-8", errors="replace")


def frames(source: Iterable[str]) -> Iterator[tuple[str | None, str]]:
    """Events as (event, data): `data:` lines joined by newlines, a blank line ends a frame, a comment
    line is (KEEPALIVE, its text) at once (the SSE spec, as the SDKs' decoders read it)."""
    event: str | None = None
    data: list[str] = []
    for line in source:
        if not line:
            if event is not None or data:
                yield event, "\n".join(data)
            event, data = None, []
            continue
        if line.startswith(":"):
            yield KEEPALIVE, line[1:].strip()
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "event":
            event = value
        elif name == "data":
            data.append(value)
    # A frame the stream ended inside is dropped, as the SDKs drop it: its data may be cut short.
