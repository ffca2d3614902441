"""`openbot run --output jsonl`: a consumer reads the event stream on stdout while the run goes on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from openbot import paths
from openbot.views.live_jsonl import SUMMARY_TYPE
from tests.helpers import complete, events, make_bot, reply, run_cli, sessions, shell

SECRET = "hunter2-the-stream-must-not-show-this"
# An OSC 52 clipboard write and a screen clear in the model's text; C1 CSI (U+009B), BEL and a bidi
# override in the command's output: JSON leaves U+009B and U+202E raw unless openbot escapes them.
HOSTILE_TEXT = f"Look \x1b]52;c;aGk=\x07 \x1b[2J {SECRET}"
HOSTILE_OUTPUT = r"printf 'out \302\233 \342\200\256 \007 \033[31m red'"
# The run cannot end before the test lets the command go on (a file in the bot's own checkout: the
# sandbox hides the test's /tmp).
WAIT = "while [ ! -e go ]; do sleep 0.05; done; " + HOSTILE_OUTPUT


def start(repo: Path, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "openbot", "run", "live", "--output", "jsonl", *args],
        cwd=repo,
        env={**os.environ, "DEPLOY_TOKEN": SECRET},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def workdir(bot: str) -> Path:
    (record,) = paths.bot_home(bot).glob("workspaces/*/runs/*/run.json")
    return Path(json.loads(record.read_text())["workdir"])


def test_a_consumer_sees_each_event_as_it_happens_and_the_summary_last(repo: Path) -> None:
    make_bot("live", [reply(HOSTILE_TEXT, shell(WAIT)), reply("", complete("streamed"))])
    proc = start(repo)
    assert proc.stdout is not None and proc.stderr is not None
    raw: list[bytes] = []
    for line in proc.stdout:  # read live: the run is blocked in its command until `go` exists
        raw.append(line)
        if json.loads(line)["type"] == "tool_call":
            break
    assert proc.poll() is None  # the tool call was seen while the run still went on
    (workdir("live") / "go").touch()
    raw += proc.stdout.readlines()
    stderr = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 0, stderr

    records = [json.loads(line) for line in raw]  # every stdout line is one JSON object
    assert [r["seq"] for r in records] == list(range(1, len(records) + 1))
    summary = records[-1]
    assert summary["type"] == SUMMARY_TYPE and summary["status"] == "completed" and summary["exit_code"] == 0
    assert summary["summary"] == "streamed" and summary["resume_command"]
    # The session's events are those of its events.jsonl, in its order, field for field.
    [session] = sessions("live")
    logged = [_without_clock(e) for e in events(session)]
    kinds = [r["type"] for r in records]
    first, last = kinds.index("session_started"), kinds.index("session_ended")
    assert [_without_clock(r) for r in records[first : last + 1]] == logged
    # The human view went to stderr.
    assert "── session 1" in stderr and "openbot: run" in stderr
    assert not any(line.startswith(b"\xe2\x94\x80\xe2\x94\x80") for line in raw)

    out = b"".join(raw)
    assert SECRET.encode() not in out and b"[REDACTED]" in out
    for byte in (b"\x1b", b"\x07", b"\xc2\x9b", b"\xe2\x80\xae"):  # nothing a terminal would act on
        assert byte not in out
    message = next(r for r in records if r["type"] == "message")
    assert message["text"].startswith("Look \x1b]52;c;aGk=\x07 \x1b[2J")  # escaped on the wire, data intact
    command = next(r for r in records if r["type"] == "command")
    assert "\u009b" in command["output"] and "\u202e" in command["output"]


def test_the_run_level_notices_are_in_the_stream(repo: Path) -> None:
    make_bot("live", [reply("", shell("echo work > work.txt")), reply("", complete("saved"))])
    out = run_cli("run", "live", "--output", "jsonl", cwd=repo)
    assert out.returncode == 0, out.stderr
    records = [json.loads(line) for line in out.stdout.splitlines()]
    kinds = [r["type"] for r in records]
    first, last = kinds.index("session_started"), kinds.index("session_ended")
    inside = [r["kind"] for r in records[first:last] if r["type"] == "notice"]
    assert inside == ["not_verified"]  # the session's own: in its log
    notices = [r for r in records[:first] + records[last:] if r["type"] == "notice"]  # the run's own log
    assert [n["kind"] for n in records[last:] if n["type"] == "notice"] == ["wip_commit"]  # after the session
    run_log = next(paths.bot_home("live").glob("workspaces/*/runs/*/events.jsonl"))
    assert [_without_clock(e) for e in events(run_log.parent)] == [_without_clock(n) for n in notices]


def test_a_consumer_that_goes_away_does_not_stop_the_run_from_saving_its_work(repo: Path) -> None:
    make_bot("live", [reply("", shell("echo work > work.txt")), reply("", complete("saved"))])
    proc = start(repo)
    assert proc.stdout is not None
    proc.stdout.close()  # the reader is gone before the first event: every write meets a closed pipe
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    assert b"Traceback" not in stderr and b"openbot: run" in stderr


def test_json_and_jsonl_together_are_a_usage_error(repo: Path) -> None:
    make_bot("live", [reply("", complete())])
    out = run_cli("run", "live", "--output", "jsonl", "--json", cwd=repo)
    # a reader of stdout still learns why: one summary line, status "error"
    [summary] = [json.loads(line) for line in out.stdout.splitlines()]
    assert out.returncode == 2 and summary["type"] == "run_summary" and summary["status"] == "error"
    assert summary["exit_code"] == 2 and "--json and --output jsonl" in summary["reason"]
    assert "--json and --output jsonl" in out.stderr and "Traceback" not in out.stderr
    for bad_option in (["--effort", "extreme"], ["--no-such-option"]):
        out = run_cli("run", "live", "-o", "jsonl", *bad_option, cwd=repo)
        assert out.returncode == 2 and json.loads(out.stdout)["status"] == "error", bad_option
    bad = run_cli("run", "live", "--output", "yaml", cwd=repo)
    assert bad.returncode == 2 and "--output 'yaml' is not one of text, json, jsonl" in bad.stderr
    assert sessions("live") == []  # refused before anything was created


def test_output_json_is_the_json_summary(repo: Path) -> None:
    make_bot("live", [reply("", complete("as before"))])
    out = run_cli("run", "live", "--output", "json", cwd=repo)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["summary"] == "as before"


def _without_clock(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k not in ("ts", "seq")}
