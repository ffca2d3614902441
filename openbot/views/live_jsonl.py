"""`openbot run --output jsonl`: every event on stdout as it happens, one JSON object a line.

The records are those of events.jsonl (docs/EVENTS.md) — the run's own notices and every session's
events, in the order they happen — redacted the same way, numbered by `seq` across the whole stream, and
the last line is the run's summary (`"type": "run_summary"`, the `--json` object). Streamed deltas and
"command started" stay live-view only, as in the logs. The human view still gets every event, on stderr.

Agent text inside the records is JSON-escaped: control characters by `json.dumps`, and DEL, C1 and bidi
controls (which JSON leaves raw) by `visible_json`, so a consumer piping the stream to a terminal sees no
escape sequence act. A consumer that goes away (a closed pipe) never stops the run from saving its work.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable

from openbot import events as ev
from openbot.views.escapes import visible_json
from openbot.views.live import LiveView

SUMMARY_TYPE = "run_summary"


class JsonlView:
    """A View that writes each persisted event to `fd` and passes everything on to the human view."""

    def __init__(self, human: LiveView, fd: int = 1, redact: Callable[[str], str] = lambda s: s) -> None:
        self.human = human
        self.fd = fd
        self.redact = redact
        self.seq = 0
        self.broken = False

    @property
    def budget(self) -> dict[str, object] | None:
        return self.human.budget

    @budget.setter
    def budget(self, value: dict[str, object] | None) -> None:
        self.human.budget = value

    def emit(self, event: ev.Event) -> None:
        if event.persist:
            self.seq += 1
            self._write(ev.to_record(event, self.seq))
        self.human.emit(event)

    def line(self, text: str) -> None:
        self.human.line(text)

    def summary(self, fields: dict[str, object]) -> None:
        """The stream's last line: the run's `--json` summary, typed so a line reader can tell it apart."""
        self.seq += 1
        self._write({"type": SUMMARY_TYPE, "ts": ev.now_iso(), "seq": self.seq, **fields})

    def close(self) -> None:
        self.human.close()

    def _write(self, record: dict[str, object]) -> None:
        if self.broken:
            return
        line = visible_json(self.redact(json.dumps(record, ensure_ascii=False))) + "\n"
        data = line.encode()
        try:
            while data:  # a signal may interrupt a large write part-way: finish the line
                data = data[os.write(self.fd, data) :]
        except OSError:  # the consumer went away (EPIPE), or a full disk: the run goes on and saves its work
            self.broken = True
