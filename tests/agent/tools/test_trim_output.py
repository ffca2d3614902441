"""Output compaction: verbatim when small; head, tail, error lines and a marker when large; streaming."""

from __future__ import annotations

import random

from openbot.agent.tools.trim_output import MAX_LINE_BYTES, OutputCompactor, compact_output


def _numbered_output(n: int, errors: dict[int, str]) -> str:
    return "".join(errors.get(i, f"line {i}") + "\n" for i in range(1, n + 1))


def _feed(data: bytes, sizes: list[int], path: str = "/tmp/out.log") -> str:
    c = OutputCompactor(path)
    pos = 0
    for size in sizes:
        c.feed(data[pos : pos + size])
        pos += size
    c.feed(data[pos:])
    return c.result()


def test_small_output_is_verbatim() -> None:
    text = "hello\nworld\n\n  indented\nno newline at end"
    assert compact_output(text) == text
    assert compact_output("") == ""


def test_large_output_keeps_head_tail_errors_and_marker() -> None:
    text = _numbered_output(200_000, {100_000: "ERROR: disk full at block 7", 150_000: "E   assert 1 == 2"})
    assert len(text) > 1_000_000
    out = compact_output(text, "/tmp/full output.log")
    assert len(out.encode()) < 16_000
    lines = out.splitlines()
    assert lines[:3] == ["line 1", "line 2", "line 3"]
    assert lines[-1] == "line 200000"
    assert "100000: ERROR: disk full at block 7" in lines
    assert "150000: E   assert 1 == 2" in lines
    marker = next(line for line in lines if line.startswith("[... "))
    assert "lines (" in marker and "cut; full output: /tmp/full output.log" in marker
    assert "sed -n '61,199920p' '/tmp/full output.log'" in marker


def test_chunking_does_not_change_the_result() -> None:
    rng = random.Random(7)
    text = _numbered_output(5_000, {i: f"Traceback at {i}" for i in rng.sample(range(100, 4_900), 50)})
    text += "x" * 5_000 + "\n" + "unterminated last line"
    data = text.encode()
    whole = compact_output(data, "/tmp/out.log")
    for _ in range(5):
        sizes = [rng.choice([1, 2, 3, 7, 100, 4096, 65536]) for _ in range(200)]
        assert _feed(data, sizes) == whole
    assert whole.endswith("unterminated last line")
    # The error lines shown are the first 40 in the cut part, numbered correctly.
    shown = [line for line in whole.splitlines() if ": Traceback at " in line]
    assert len(shown) == 40
    assert all(line.split(":")[0] == line.rsplit(" ", 1)[1] for line in shown)


def test_long_lines_are_truncated_and_the_result_stays_small() -> None:
    long_line = "y" * 50_000
    out = compact_output("\n".join([long_line] * 300))
    assert f"[... line truncated, {50_000 - MAX_LINE_BYTES:,} more bytes]" in out
    assert len(out.encode()) < 16_000
    single = compact_output(b"z" * 10_000_000, "/tmp/one.log")
    assert single.startswith("z" * 100)
    assert "full output (10.0 MB): /tmp/one.log" in single
    assert len(single) < 3_000


def test_many_short_lines_just_over_the_limit() -> None:
    text = _numbered_output(250, {})
    out = compact_output(text)
    assert "line 1\n" in out and out.endswith("line 250")
    assert "[... 110 lines (" in out
    assert "line 61\n" not in out and "line 170\n" not in out
