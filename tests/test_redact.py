"""Secret redaction: values of secret-looking env vars and common key shapes."""

from __future__ import annotations

import json
import time

from openbot.redact import REDACTED, Redactor, StreamRedactor

ENVIRON = {
    "ANTHROPIC_API_KEY": "plain-model-key-123456",
    "DB_PASSWORD": 'pa"ss\\word-42',
    "SHORT_TOKEN": "1",
    "HOME": "/home/user",
    "PATH": "/usr/bin",
}


def test_env_secret_values_are_redacted() -> None:
    r = Redactor.from_env(ENVIRON)
    assert r.redact("key=plain-model-key-123456 end") == f"key={REDACTED} end"
    assert r.redact('pw pa"ss\\word-42') == f"pw {REDACTED}"
    # Also after JSON encoding, which is what the event log redacts.
    line = json.dumps({"output": 'the password is pa"ss\\word-42'})
    assert "word-42" not in r.redact(line)
    assert json.loads(r.redact(line))["output"] == f"the password is {REDACTED}"
    # Short values and non-secret names are left alone.
    assert r.redact("exit code 1 in /home/user") == "exit code 1 in /home/user"


def test_key_shapes_are_redacted_without_env() -> None:
    r = Redactor()
    samples = [
        "sk-ant-api03-AbCdEfGhIjKlMnOp_qrs-tuv",
        "sk-proj-abcdefghijklmnopqrstuvwx",
        "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "gho_abcdefghijklmnopqrstuvwxyz0123456789",
        "ghs_abcdefghijklmnopqrstuvwxyz0123456789",
        "github_pat_11ABCDEFG0abcdefghijkl_mnopqrstuvwxyz0123456789",
        "AKIAIOSFODNN7EXAMPLE",
        "xoxb-1234567890-abcdefghij",
    ]
    for key in samples:
        assert r.redact(f"token: {key}\n") == f"token: {REDACTED}\n", key


def test_ordinary_text_is_not_redacted() -> None:
    r = Redactor()
    text = "task-runner-configuration-manager risk-assessment-of-the-whole-module sk-short AKIA123"
    assert r.redact(text) == text


def test_redact_obj_walks_structures() -> None:
    r = Redactor(["supersecretvalue"])
    obj = {"a": ["x supersecretvalue", {"b": "supersecretvalue"}], "n": 3, "ok": None}
    assert r.redact_obj(obj) == {"a": [f"x {REDACTED}", {"b": REDACTED}], "n": 3, "ok": None}


def test_fast_enough_for_every_event_line() -> None:
    r = Redactor.from_env({f"SERVICE_{i}_TOKEN": f"token-value-{i:04d}-abcdef" for i in range(50)})
    line = json.dumps({"type": "command", "output": "ordinary build output " * 200})
    start = time.perf_counter()
    for _ in range(200):
        r.redact(line)
    per_line = (time.perf_counter() - start) / 200
    assert per_line < 0.005


def test_key_shapes_need_a_token_boundary() -> None:
    r = Redactor()
    key = "sk-ant-api03-AbCdEfGhIjKlMnOp_qrs-tuv"
    assert r.redact(f"x{key}") == f"x{key}" and r.redact(f"-{key}") == f"-{key}"
    assert r.redact(f"{key}") == REDACTED and r.redact(f"={key}") == f"={REDACTED}"
    assert r.redact("AKIAIOSFODNN7EXAMPLE1") == "AKIAIOSFODNN7EXAMPLE1"  # one character too long


def test_output_full_of_near_misses_is_left_alone() -> None:
    # "disk-", "task-" contain the "sk-" marker, so the regex scan runs on every chunk of such output.
    # (How fast that scan is belongs to a benchmark, not to a test: tests do not time the machine.)
    text = "task-runner: disk-full check ok sk-x\n" * 30_000
    assert Redactor().redact(text) == text


def _stream(redactor: StreamRedactor, data: bytes, cuts: list[int]) -> bytes:
    out = []
    for start, end in zip([0, *cuts], [*cuts, len(data)], strict=True):
        out.append(redactor.feed(data[start:end]))
    return b"".join([*out, redactor.flush()])


def test_stream_finds_a_secret_split_across_chunks() -> None:
    r = Redactor(["plain-secret-value-42"])
    data = (
        "ok\nthe value is plain-secret-value-42 and ghp_abcdefghijklmnopqrstuvwxyz0123456789\nend é".encode()
    )
    want = f"ok\nthe value is {REDACTED} and {REDACTED}\nend é".encode()
    for cut in range(1, len(data)):
        assert _stream(StreamRedactor(r.redact), data, [cut]) == want, cut
    assert _stream(StreamRedactor(r.redact), data, list(range(1, len(data)))) == want


def test_stream_holds_only_unfinished_lines_and_passes_other_bytes_through() -> None:
    s = StreamRedactor(Redactor(["plain-secret-value-42"]).redact)
    assert s.feed(b"partial plain-secret") == b""  # waits for the end of the line
    assert s.feed(b"-value-42 done\nnext") == f"partial {REDACTED} done\n".encode()
    assert s.feed(b" \xff\xfe binary\n") == b"next \xff\xfe binary\n"  # not UTF-8: unchanged
    assert s.flush() == b"" and s.flush() == b""


def test_stream_gives_up_waiting_for_the_end_of_a_huge_line() -> None:
    s = StreamRedactor(Redactor(["plain-secret-value-42"]).redact, max_line=100)
    assert s.feed(b"x" * 60) == b""
    assert s.feed(b"y" * 60 + b" plain-secret-value-42") == b"x" * 60 + b"y" * 60 + f" {REDACTED}".encode()
    assert s.feed(b"a\n" + b"z" * 150) == b"a\n" + b"z" * 150  # the rest after a newline is capped too
    assert s.flush() == b""
