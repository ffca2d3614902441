"""Secret redaction: values of secret-looking env vars and common key shapes."""

from __future__ import annotations

import json
import time

from openbot.redact import REDACTED, Redactor

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
