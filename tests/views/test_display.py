"""The live views: plain lines for logs and CI, a rich status line on a terminal; both redact."""

from __future__ import annotations

import io
import re
from pathlib import Path

from rich.console import Console

from openbot import events as ev
from openbot.views.live import LiveView, RichView

SECRET = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz"


def redact(text: str) -> str:
    return text.replace(SECRET, "[REDACTED]")


def feed(view: LiveView) -> None:
    view.budget = {"max_cost_usd": 5.0, "max_tokens": None}
    view.emit(ev.SessionStarted(session_id="000001-x", session_number=1, run_id="r", model="m", branch="b"))
    view.emit(ev.TurnStarted(model="m"))
    view.emit(ev.TextDelta(text="hel"))
    view.emit(ev.Message(text=f"hello {SECRET}"))
    view.emit(ev.CommandStarted(command=f"echo {SECRET}"))
    view.emit(
        ev.Command(tool_use_id="t", command="echo", exit_code=0, duration_ms=1200, output="", output_bytes=5)
    )
    view.emit(ev.TokenCount(model="m", input=100, output=20, cache_read=0, cache_write=0, cost_usd=0.25))
    view.emit(ev.TurnCompleted(steps=1, stop_reason="end_turn"))


def test_plain_view_prints_lines_with_budget_and_no_secret() -> None:
    out = io.StringIO()
    view = LiveView(out, redact, stream_text=False)
    feed(view)
    text = out.getvalue()
    assert "── session 1 · b" in text and "→ exit 0 in 1.2s" in text
    assert "120 tokens · $0.2500 of $5.00 so far" in text
    assert SECRET not in text and "[REDACTED]" in text


def test_rich_view_shows_the_current_step_time_and_output_and_redacts(tmp_path: Path) -> None:
    out = io.StringIO()
    view = RichView(Console(file=out, force_terminal=True, width=120), redact)
    feed(view)
    status = r"\d+s · step 1 · between iterations \d+s · 120 tokens · \$0\.2500 of \$5\.00 so far"
    assert re.fullmatch(status, view._status_text())
    log = tmp_path / "out.log"
    log.write_text(f"compiling\n\x1b]52;c;aGFjaw==\x07first\nsecond {SECRET}\n")
    view.emit(ev.CommandStarted(command=f"make test {SECRET}", full_output_path=str(log)))
    assert view.activity == "running $ make test [REDACTED]"
    # the last lines of the running command, redacted and inert, under the status line
    lines = view._status_text().split("\n")
    assert re.fullmatch(r"\d+s · step 1 · running \$ make test \[REDACTED\] \d+s · .*", lines[0])
    assert lines[1:] == ["    │ \\x1b]52;c;aGFjaw==\\x07first", "    │ second [REDACTED]"]
    view.emit(
        ev.Command(
            tool_use_id="t", command="make test", exit_code=0, duration_ms=5, output="", output_bytes=0
        )
    )
    assert "\n" not in view._status_text()
    view.close()
    assert SECRET not in out.getvalue() and "hello [REDACTED]" in out.getvalue()


def test_every_retry_is_a_line_saying_when_the_request_is_re_sent() -> None:
    out = io.StringIO()
    view = LiveView(out, redact, stream_text=False)
    view.emit(ev.Retry(attempt=1, cause="unavailable: connection dropped", wait_secs=0))
    view.emit(ev.Retry(attempt=2, cause="unavailable: connection dropped", wait_secs=1.0))
    lines = out.getvalue().splitlines()
    assert lines == [
        "  ! model call failed (unavailable: connection dropped); re-sent at once (retry 1)",
        "  ! model call failed (unavailable: connection dropped); re-sent in 1.0s (retry 2)",
    ]
