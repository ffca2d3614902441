"""The live view of a run on stderr: plain lines, with assistant text streamed when stderr is a terminal.

It is an EventSink like the log writer; under CI (or without a TTY) it prints plain log lines only.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TextIO

from openbot import events as ev
from openbot.views.escapes import visible


def _first_line(text: str, limit: int = 160) -> str:
    text = visible(text).strip()
    line = text.split("\n", 1)[0]
    return line if len(line) <= limit else line[: limit - 1] + "…"


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
        self.budget: dict[str, object] | None = None

    def close(self) -> None:
        pass

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
        cost = f"${self.cost:.4f}" + (f" of ${b['max_cost_usd']:.2f}" if b.get("max_cost_usd") else "")
        return f"{tokens} · {cost} so far"

    def emit(self, event: ev.Event) -> None:
        match event:
            case ev.TextDelta(text=t) if self.stream_text:
                self._write(self.redact(t))
                self._mid_text = True
            case ev.Message(text=t) if not self.stream_text:
                for part in visible(t).strip().split("\n"):  # a `\r` is shown, not a line end
                    self.line(f"  │ {part}")
            case ev.Message():
                self.line("")
            case ev.SessionStarted(session_number=n, branch=b):
                self.line(f"── session {n}" + (f" · {b}" if b else ""))
            case ev.CommandStarted(command=c):
                self.line(f"  $ {_first_line(self.redact(c))}")
            case ev.Command(exit_code=code, duration_ms=ms, output_bytes=size, timed_out=to):
                status = "killed (timeout)" if to else ("killed" if code is None else f"exit {code}")
                self.line(f"    → {status} in {ms / 1000:.1f}s, {size:,} bytes of output")
            case ev.ToolCall(name=name, input=inp) if name != "shell":
                detail = " ".join(
                    str(inp.get(k, "")) for k in ("command", "action", "path", "key") if k in inp
                )
                self.line(f"  • {name} {_first_line(self.redact(detail), 100)}")
            case ev.ToolResult(name=name, is_error=True, content=c):
                self.line(f"    ! {name} failed: {_first_line(self.redact(c))}")
            case ev.TokenCount(input=i, output=o, cache_read=r, cache_write=w, cost_usd=c):
                self.tokens += i + o + r + w
                self.cost += c
            case ev.TurnCompleted(steps=s):
                self.line(f"  turn ended · {s} steps · {self._spent()}")
            case ev.TurnAborted(reason=why, detail=d):
                self.line(f"  turn ended ({why}: {d}) · {self._spent()}")
            case ev.Retry(attempt=a, cause=c, wait_secs=w):
                self.line(f"  ! model call failed ({c}); retry {a} in {w:.1f}s")
            case ev.UserInput(text=t):
                self.line(f"  > {t}")
            case ev.Error(message=m):
                self.line(f"  ✗ {m}")
            case ev.Notice(message=m):
                self.line(f"  · {m}")
            case ev.SessionEnded(status=st, reason=r):
                self.line(f"  session {st}" + (f": {r}" if r else ""))
            case _:
                pass


class RichView(LiveView):
    """The terminal view: the same lines, plus a status line with the current step, the command running,
    and tokens and cost so far (rich; used only when stderr is a terminal and not under CI)."""

    def __init__(self, console: Any, redact: Callable[[str], str] = lambda s: s) -> None:
        super().__init__(console.file, redact, stream_text=False)
        self.console = console
        self.steps = 0
        self.activity = "starting"
        self.status = console.status(self._status_renderable())
        self.status.start()

    def _status_text(self) -> str:
        return visible(f"step {self.steps} · {self.activity} · {self._spent()}")

    def _status_renderable(self) -> Any:
        """The status line as rich Text: a string would be read as markup (`[link=…]` is an OSC 8 link)."""
        from rich.text import Text

        return Text(self._status_text())

    def line(self, text: str) -> None:
        if self.broken:
            return
        try:
            self.console.print(visible(self.redact(text)), markup=False, highlight=False, soft_wrap=True)
        except (OSError, ValueError):
            self.broken = True

    def emit(self, event: ev.Event) -> None:
        super().emit(event)
        match event:
            case ev.TurnStarted():
                self.steps, self.activity = 0, "waiting for the model"
            case ev.TokenCount():
                self.steps += 1
            case ev.TextDelta():
                self.activity = "the model is writing"
            case ev.CommandStarted(command=c):
                self.activity = f"running $ {_first_line(self.redact(c), 60)}"
            case ev.Command() | ev.ToolResult() | ev.ToolCall():
                self.activity = "waiting for the model"
            case ev.TurnCompleted() | ev.TurnAborted():
                self.activity = "between iterations"
            case _:
                return
        self.status.update(self._status_renderable())

    def close(self) -> None:
        try:
            self.status.stop()
        except (OSError, ValueError):
            pass


def make_view(redact: Callable[[str], str], in_ci: bool) -> LiveView:
    """Rich on an interactive terminal, plain log lines otherwise (CI, pipes, files)."""
    if sys.stderr.isatty() and not in_ci:
        from rich.console import Console

        return RichView(Console(stderr=True), redact)
    return LiveView(sys.stderr, redact, stream_text=False if in_ci else None)
