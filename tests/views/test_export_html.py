"""The HTML export: every event type shows up, untrusted text is escaped, and a real browser renders it."""

from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from openbot import events as ev
from openbot.events import EventLog
from openbot.views.html import render_session_dir, render_session_html

EVIL = "<script>alert('pwned')</script>"

METADATA = {
    "session_id": "000003-20260101T020000Z",
    "session_number": 3,
    "run_id": "run-42",
    "started_at": "2026-01-01T02:00:00Z",
    "duration_secs": 754.2,
    "model": "claude-sonnet-5-5",
    "status": "completed",
    "prompt_summary": "Write tests for parser.py",
    "response_summary": f"Added 4 tests. {EVIL}",
    "action": "review",
    "branch": "openbot/test-writer-20260101T020000Z",
    "base": "main",
    "tokens": {"input": 12000, "output": 3400, "cache_read": 50000, "cache_write": 900},
    "cost_usd": 0.4321,
    "command_count": 2,
}

# One event of every persisted type, in the shapes openbot.events writes, plus one unknown type.
EVENTS: list[ev.Event] = [
    ev.SessionStarted(session_id="000003-20260101T020000Z", session_number=3, run_id="run-42", model="m-1"),
    ev.TurnStarted(model="m-1"),
    ev.UserInput(text="please also cover the CLI"),
    ev.Message(text="Let me look around first."),
    ev.ToolCall(id="toolu_1", name="shell", input={"command": "pytest -q tests/"}),
    ev.Command(
        tool_use_id="toolu_1",
        command="pytest -q tests/",
        exit_code=1,
        duration_ms=2345,
        output=f"FAILED test_x.py::test_a\n{EVIL}\n",
        output_bytes=1234,
        full_output_path="/tmp/out/toolu_1.txt",
    ),
    ev.ToolResult(tool_use_id="toolu_1", name="shell", is_error=True, content="exit code 1"),
    ev.ToolCall(id="toolu_2", name="edit", input={"command": "create", "path": "t.py", "file_text": "x = 1"}),
    ev.ToolResult(tool_use_id="toolu_2", name="edit", is_error=False, content="created t.py"),
    ev.Command(
        tool_use_id="toolu_3",
        command="sleep 999",
        exit_code=None,
        duration_ms=600000,
        output="",
        output_bytes=0,
        timed_out=True,
    ),
    ev.TokenCount(model="m-1", input=1200, output=340, cache_read=5000, cache_write=90, cost_usd=0.0123),
    ev.Retry(attempt=2, cause="overloaded_error", wait_secs=4.0),
    ev.Error(message="API said no", kind="model"),
    ev.Notice(kind="wip_commit", message="committed leftover changes", data={"commit": "abc123"}),
    ev.TurnAborted(reason="stuck", detail="same call 5 times"),
    ev.TurnCompleted(steps=7, stop_reason="end_turn"),
    ev.SessionEnded(status="completed", reason="session_complete"),
]


@pytest.fixture
def session_dir(tmp_path: Path) -> Path:
    """A session directory written by the real EventLog, plus one record of a type this version lacks."""
    d = tmp_path / "000003-20260101T020000Z"
    log = EventLog(d / "events.jsonl")
    for event in EVENTS:
        log.emit(event)
    log.close()
    with open(d / "events.jsonl", "a") as f:
        f.write(
            json.dumps({"type": "future_thing", "ts": "2026-01-01T02:09:00Z", "seq": 99, "x": EVIL}) + "\n"
        )
    (d / "metadata.json").write_text(json.dumps(METADATA))
    return d


def test_untrusted_text_is_escaped(session_dir: Path) -> None:
    page = render_session_dir(session_dir)
    assert "<script" not in page.lower()
    assert "&lt;script&gt;alert(&#x27;pwned&#x27;)&lt;/script&gt;" in page
    # The escaped payload appears where it came from: command output, summary, unknown event.
    assert page.count("&lt;script&gt;") == 3


def test_every_event_type_is_rendered(session_dir: Path) -> None:
    page = render_session_dir(session_dir)
    records = [json.loads(line) for line in (session_dir / "events.jsonl").read_text().splitlines()]
    for record in records:
        assert f'id="e{record["seq"]}"' in page, record["type"]
    for text in [
        "please also cover the CLI",
        "Let me look around first.",
        "pytest -q tests/",
        "exit 1",
        "timed out",
        "/tmp/out/toolu_1.txt",
        "created t.py",
        "<code>create t.py</code>",
        "no output",
        "error (model)",
        "&quot;file_text&quot;: &quot;x = 1&quot;",
        "input 1,200",
        "overloaded_error",
        "API said no",
        "committed leftover changes",
        "abc123",
        "turn aborted: stuck",
        "same call 5 times",
        "stop reason end_turn",
        "session ended",
        "future_thing",
    ]:
        assert text in page, text
    # A failed command's output starts open; the successful edit's result stays folded.
    assert re.search(r"<details open><summary>output \(1,234 bytes\)</summary><pre>FAILED", page)
    assert "<details><summary>edit result</summary>" in page


def test_metadata_header(session_dir: Path) -> None:
    page = render_session_dir(session_dir)
    header = page.split("<h2>Transcript</h2>")[0]
    for text in [
        "completed",
        "claude-sonnet-5-5",
        "openbot/test-writer-20260101T020000Z",
        "12m 34s",
        "66,300",
        "$0.4321",
        "review",
        "Write tests for parser.py",
        "Added 4 tests.",
    ]:
        assert text in header, text


def test_page_is_self_contained() -> None:
    page = render_session_html(METADATA, [])
    assert "No events were recorded." in page
    assert not re.search(r"(src|href)\s*=", page), "no external assets"
    assert "default-src 'none'" in page


def test_damaged_metadata_still_renders_events(session_dir: Path) -> None:
    (session_dir / "metadata.json").write_text("{torn")
    page = render_session_dir(session_dir)
    assert "damaged record" in page and "metadata.json" in page
    assert "Let me look around first." in page


def test_command_line_writes_the_page(session_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "page.html"
    proc = subprocess.run(
        [sys.executable, "-m", "openbot.views.html", str(session_dir), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert out.read_text() == render_session_dir(session_dir)
    bad = subprocess.run(
        [sys.executable, "-m", "openbot.views.html", str(tmp_path / "nope")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "not a directory" in bad.stderr


def _png_pixels(data: bytes) -> tuple[int, int, set[bytes]]:
    """Width, height and the set of distinct RGB(A) pixels of an 8-bit non-interlaced PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, chunk = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        header = chunk if kind == b"IHDR" else header
        idat += chunk if kind == b"IDAT" else b""
        pos += 12 + length
    width, height, depth, color = struct.unpack(">IIBB", header[:10])
    assert depth == 8 and color in (2, 6), (depth, color)
    bpp = 3 if color == 2 else 4
    raw, stride, prev, colors = zlib.decompress(idat), width * bpp, bytearray(width * bpp), set()
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + b) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        colors.update(bytes(line[i : i + 3]) for i in range(0, stride, bpp))
        prev = line
    return width, height, colors


def test_headless_chromium_renders_the_page(session_dir: Path, tmp_path: Path) -> None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("chromium is not installed (Debian: apt-get install --no-install-recommends chromium)")
    page, shot = tmp_path / "page.html", tmp_path / "shot.png"
    page.write_text(render_session_dir(session_dir), encoding="utf-8")
    proc = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-dev-shm-usage",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--window-size=800,900",
            f"--screenshot={shot}",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shot.is_file(), f"no screenshot (exit {proc.returncode}): {proc.stderr[-2000:]}"
    width, height, colors = _png_pixels(shot.read_bytes())
    assert (width, height) == (800, 900)
    # A blank or failed page has one or two colours; text, badges and code blocks give many.
    assert len(colors) > 20, f"the screenshot looks blank ({len(colors)} colours)"
