"""The live view of a run on stderr: plain lines, with assistant text streamed when stderr is a terminal.

It is an EventSink like the log writer; under CI (or without a TTY) it prints plain log lines only. It
reads each event as a transcript entry (openbot.views.transcript), like `history` and the HTML export,
and every line it writes — runner messages included — passes through `escapes.visible`.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

from openbot import events as ev
from openbot.views.escapes import visible
from openbot.views.fields import lines_of, money
from openbot.views.heartbeat import Heartbeat
from openbot.views.transcript import (
    Boundary,
    Called,
    Consulted,
    Entry,
    Happened,
    Ran,
    Returned,
    Said,
    Spent,
    live_entry,
)


def _first_line(text: str, limit: int = 160) -> str:
    text = visible(text).strip()
    line = text.split("\n", 1)[0]
    return line if len(line) <= limit else line[: limit - 1] + "…"


def clock(secs: float) -> str:
    """Elapsed time as a person reads it: 42s, 3m07s, 1h05m."""
    s = int(secs)
    if s < 3600:
        return f"{s}s" if s < 60 else f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def tail(path: str, lines: int = 2, limit: int = 4096) -> list[str]:
    """The last lines a running command wrote to its log (best effort: it may be gone or mid-write). The
    log is openbot's own file; opened without following a link or blocking, all the same."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return []
    try:
        size = os.fstat(fd).st_size
        data = os.pread(fd, limit, max(0, size - limit))
    except OSError:
        return []
    finally:
        os.close(fd)
    text = data.decode("utf-8", "replace").replace("\r", "\n")
    return [_first_line(line, 100) for line in text.split("\n") if line.strip()][-lines:]


class LiveView:
    def __init__(
        self,
        stream: TextIO | None = None,
        redact: Callable[[str], str] = lambda s: s,
        stream_text: bool | None = None,
    ) -> None:
        self.out = stream or sys.stderr
        self.redact = redact
        self.stream_text = self.out.isatty() if stream_text is None else stream_text
        self._mid_text = False
        self.broken = False
        self.tokens = 0
        self.cost = 0.0
        self.cost_known = True
        self.budget: dict[str, object] | None = None
        # Off a terminal, a long model call says it is waiting (views/heartbeat.py); a terminal has the
        # status line, and `openbot logs` shows stored events (through `show`, never `emit`).
        self.heartbeat = None if self.stream_text else Heartbeat(self.line)

    def close(self) -> None:
        if self.heartbeat is not None:
            self.heartbeat.stop()

    def line(self, text: str) -> None:
        self._write(("\n" if self._mid_text else "") + self.redact(text) + "\n")
        self._mid_text = False

    def _write(self, text: str) -> None:
        """Best effort: a closed stderr (its pipe's reader died) must not stop the run from saving work."""
        if self.broken:
            return
        try:
            self.out.write(visible(text))
            self.out.flush()
        except (OSError, ValueError):
            self.broken = True

    def _spent(self) -> str:
        """Tokens and cost so far, with the run's limits when it has them (set by the runner)."""
        b = self.budget or {}
        tokens = f"{self.tokens:,}" + (f" of {b['max_tokens']:,}" if b.get("max_tokens") else "") + " tokens"
        cost = money(self.cost, self.cost_known) + (
            f" of ${b['max_cost_usd']:.2f}" if b.get("max_cost_usd") else ""
        )
        return f"{tokens} · {cost} so far"

    def emit(self, event: ev.Event) -> None:
        if self.heartbeat is not None:
            self.heartbeat.saw(event.type)
        self.show(live_entry(event))

    def show(self, e: Entry) -> None:
        match e:
            case Said(streamed=True) if self.stream_text:
                self._write(self.redact(e.text))
                self._mid_text = True
            case Said(streamed=True):
                pass
            case Said(who="user"):
                self.line(f"  > {e.text}")
            case Said() if not self.stream_text:
                for part in lines_of(e.text.strip()):
                    self.line(f"  │ {part}")
            case Said():
                self.line("")  # its text was streamed: end the line
            case Ran(done=False):
                self.line(f"  $ {_first_line(self.redact(e.command))}")
            case Ran():
                self.line(f"    → {e.status} in {e.seconds:.1f}s, {e.output_bytes or 0:,} bytes of output")
            case Called() if e.tool != "shell":
                self.line(f"  • {e.tool} {_first_line(self.redact(e.gist), 100)}")
            case Returned(is_error=True):
                self.line(f"    ! {e.tool} failed: {_first_line(self.redact(e.content))}")
            case Consulted(is_error=True):
                self.line(f"    ! {e.name} failed: {_first_line(self.redact(e.output))}")
            case Consulted():
                self.line(f"    → ok in {e.seconds:.1f}s, {e.output_bytes or 0:,} bytes")
            case Spent():
                self.tokens += e.total
                self.cost += e.cost_usd
                self.cost_known = self.cost_known and e.cost_known
            case Happened(kind="retry"):
                self.line(f"  ! model call failed ({e.label}); {e.text}")
            case Happened(kind="error"):
                self.line(f"  ✗ {e.text}")
            case Happened(kind="notice", label="run_note"):
                self.line(e.text)
            case Happened(kind="notice", label="run_warning"):
                self.line(f"!! {e.text}")
            case Happened(kind="notice", label="sleeping"):
                self.line(f"  {e.text}")
            case Happened(kind="notice", label="notified"):
                self.line(f"· {e.text}")
            case Happened(kind="verification" | "review" | "network"):
                if e.label != "allowed":  # a connection the proxy allowed is in the log only
                    self.line(f"  {'✓' if e.label == 'passed' else '✗'} {e.text}")
            case Happened():
                self.line(f"  · {e.text}")
            case Boundary():
                self._boundary(e)

    def _boundary(self, e: Boundary) -> None:
        match e.kind:
            case "session_started":
                self.line(f"── session {e.session_number}" + (f" · {e.branch}" if e.branch else ""))
            case "turn_completed":
                self.line(f"  turn ended · {e.steps} steps · {self._spent()}")
            case "turn_aborted":
                self.line(f"  turn ended ({e.outcome}: {e.detail}) · {self._spent()}")
            case "session_ended":
                self.line(f"  session {e.outcome}" + (f": {e.detail}" if e.detail else ""))


class RichView(LiveView):
    """The terminal view: the same lines, plus a status line with the current step, the command running,
    and tokens and cost so far (rich; used only when stderr is a terminal and not under CI)."""

    def __init__(self, console: Any, redact: Callable[[str], str] = lambda s: s) -> None:
        super().__init__(console.file, redact, stream_text=False)
        self.heartbeat = None  # the status line shows the wait
        self.console = console
        self.steps = 0
        self.activity = "starting"
        self.started = self.since = time.monotonic()
        self.running_log = ""  # the output log of the command running now
        self.status = console.status(self._status_renderable())
        self.status.start()

    def _status_text(self) -> str:
        """Run time · step · what is happening and for how long · spend; under it, the last lines of a
        running command's output (so a stalled model, a long test run and progress look different)."""
        now = time.monotonic()
        line = (
            f"{clock(now - self.started)} · step {self.steps} · {self.activity} {clock(now - self.since)}"
            f" · {self._spent()}"
        )
        shown = tail(self.running_log) if self.running_log else []
        return visible("\n".join([line, *(f"    │ {self.redact(t)}" for t in shown)]))

    def _status_renderable(self) -> object:
        return _StatusLine(self)

    def line(self, text: str) -> None:
        if self.broken:
            return
        try:
            self.console.print(visible(self.redact(text)), markup=False, highlight=False, soft_wrap=True)
        except (OSError, ValueError):
            self.broken = True

    def show(self, e: Entry) -> None:
        super().show(e)
        before = self.activity
        match e:
            case Boundary(kind="turn_started"):
                self.steps, self.activity = 0, "waiting for the model"
            case Spent():
                self.steps += 1
            case Said(streamed=True):
                self.activity = "the model is writing"
            case Ran(done=False):
                self.activity = f"running $ {_first_line(self.redact(e.command), 60)}"
                self.running_log = e.full_output_path
            case Ran() | Returned() | Called() | Consulted():
                self.activity, self.running_log = "waiting for the model", ""
            case Boundary(kind="turn_completed" | "turn_aborted"):
                self.activity = "between iterations"
            case _:
                return
        if self.activity != before or isinstance(e, Ran):  # its clock counts the time in this activity
            self.since = time.monotonic()

    def close(self) -> None:
        try:
            self.status.stop()
        except (OSError, ValueError):
            pass


class _StatusLine:
    """The status line, rendered anew at each refresh of the spinner, so its clocks and the command's
    output tail move while nothing else happens. rich Text: a string would be read as markup."""

    def __init__(self, view: RichView) -> None:
        self.view = view

    def __rich__(self) -> object:
        from rich.text import Text

        return Text(self.view._status_text())


def make_view(redact: Callable[[str], str], in_ci: bool) -> LiveView:
    """Rich on an interactive terminal, plain log lines otherwise (CI, pipes, files)."""
    if sys.stderr.isatty() and not in_ci:
        from rich.console import Console

        return RichView(Console(stderr=True), redact)
    return LiveView(sys.stderr, redact, stream_text=False if in_ci else None)
