"""Notifications when a run ends: a loopback webhook receiver and a command target, through the real CLI;
retries, a failure that is only a warning, secrets in URLs never shown, and the bounded wait."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from openbot.config.notify import parse_targets
from openbot.run.notify import deliver
from tests.helpers import complete, make_bot, reply, run_cli, sessions

SECRET_PATH = "T0001/B0002/s3cr3t-webhook-path-value"


@dataclass
class Receiver:
    """A loopback webhook: answers each POST with the next status of `statuses` (then 200)."""

    statuses: list[int] = field(default_factory=list)
    hang: threading.Event | None = None
    received: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    port: int = 0

    def url(self, path: str = "hook") -> str:
        return f"http://127.0.0.1:{self.port}/{path}"


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    rec = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            rec.received.append((self.path, body))
            if rec.hang is not None:
                rec.hang.wait(30)
            status = rec.statuses.pop(0) if rec.statuses else 200
            try:
                self.send_response(status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")
            except OSError:
                pass  # the client gave up (the deadline test)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    rec.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield rec
    if rec.hang is not None:
        rec.hang.set()
    server.shutdown()
    server.server_close()


def test_a_completed_run_posts_its_summary_and_runs_the_command(
    repo: Path, tmp_path: Path, receiver: Receiver
) -> None:
    received = tmp_path / "received.json"
    config = f"""sleep_secs = 0
[[notify]]
url = "{receiver.url()}"
on = ["completed", "failed"]

[[notify]]
command = ["sh", "-c", "cat > '{received}'"]

[[notify]]
url = "{receiver.url("never")}"
on = ["limit"]
"""
    commit = {"name": "shell", "input": {"command": "echo x > f && git add f && git commit -qm f"}}
    make_bot("nightly", [reply("", commit), reply("", complete("fixed two typos", "review"))], config=config)
    receiver.statuses = [503]  # the first attempt fails: retried
    out = run_cli("run", "nightly", cwd=repo)
    assert out.returncode == 0, out.stderr
    paths = [p for p, _ in receiver.received]
    assert paths == ["/hook", "/hook"]  # retried once; the "limit" target was not called
    body = receiver.received[-1][1]
    assert body["status"] == "completed" and body["exit_code"] == 0 and body["bot"] == "nightly"
    assert body["summary"] == "fixed two typos" and body["action"] == "review"
    assert body["repo"] == str(repo) and body["branch"].startswith("openbot/nightly-")
    assert body["resume_command"].startswith("openbot run nightly --resume ")
    assert {"iterations", "tokens", "cost_usd", "run_id"} <= set(body)
    assert body["text"].startswith(":white_check_mark: openbot: *nightly* completed")
    assert json.loads(received.read_text()) == body  # the command got the same JSON on stdin
    assert "· notified notify[1]" in out.stderr and "· notified notify[2]" in out.stderr


def test_a_failed_delivery_is_a_warning_and_the_secret_url_is_never_shown(
    repo: Path, receiver: Receiver
) -> None:
    config = f"""sleep_secs = 0
max_iterations = 1
[[notify]]
url = "http://127.0.0.1:{receiver.port}/${{HOOK_PATH}}"
on = ["limit"]
"""
    make_bot(
        "leaky",
        [reply("", {"name": "shell", "input": {"command": "echo $HOOK_PATH"}}), reply("done")],
        config=config,
    )
    receiver.statuses = [404]
    out = run_cli("run", "leaky", cwd=repo, env={"HOOK_PATH": SECRET_PATH})
    assert out.returncode == 3, out.stderr  # the run's own outcome (iteration limit), not the delivery's
    assert receiver.received[0][0] == f"/{SECRET_PATH}"  # the real URL was used
    assert len(receiver.received) == 1  # a 404 is not retried
    assert "!! WARNING: could not notify notify[1] (webhook http://127.0.0.1:" in out.stderr
    assert "/${HOOK_PATH}): HTTP 404" in out.stderr
    [session] = sessions("leaky")
    written = "".join(p.read_text() for p in session.rglob("*") if p.is_file())
    assert SECRET_PATH not in out.stderr + out.stdout + written


def test_an_unset_variable_in_a_url_is_refused_before_the_run(repo: Path) -> None:
    make_bot("unset", [reply("done")], config='sleep_secs = 0\n[[notify]]\nurl = "${NOT_SET_ANYWHERE}"')
    out = run_cli("run", "unset", cwd=repo)
    assert out.returncode == 2
    assert "key 'notify[1].url' uses ${NOT_SET_ANYWHERE}, which is not set" in out.stderr
    assert "config.md" in out.stderr and "Traceback" not in out.stderr
    assert sessions("unset") == []


def test_delivery_never_holds_the_exit_past_its_deadline(receiver: Receiver, tmp_path: Path) -> None:
    receiver.hang = threading.Event()
    targets = parse_targets(
        [{"url": receiver.url()}, {"command": ["sleep", "30"]}, {"command": ["true"]}], "test.md"
    )
    results = deliver(targets, {"status": "failed"}, {"PATH": "/usr/bin:/bin"}, str, deadline_secs=1)
    assert [r.ok for r in results] == [False, False, True]
    assert "still running" in results[1].detail
    assert results[0].detail  # whatever it was (timeout, gave up), it is said


def test_a_command_that_fails_is_reported_with_its_last_stderr_line() -> None:
    targets = parse_targets([{"command": "echo 'mail: no route' >&2; exit 7"}], "test.md")
    [result] = deliver(targets, {"status": "failed"}, {"PATH": "/usr/bin:/bin"}, str)
    assert not result.ok and result.detail == "exit code 7: mail: no route"


def test_the_agents_summary_cannot_ping_a_channel_or_disguise_a_link(repo: Path, receiver: Receiver) -> None:
    """Slack reads `<!channel>` as a mention and `<http://x|y>` as a link shown as `y`: in `text`, the
    agent's words are escaped (Slack's `&amp;`, `&lt;`, `&gt;`), so they show as typed and do nothing."""
    summary = (
        "<!channel> urgent: log in at <http://evil.example/login|https://sso.example.com> & <@U024BE7LH>"
    )
    config = f'sleep_secs = 0\n[[notify]]\nurl = "{receiver.url()}"'
    make_bot("loud", [reply("", complete(summary, "review"))], config=config)
    out = run_cli("run", "loud", cwd=repo)
    assert out.returncode == 0, out.stderr
    [(_, body)] = receiver.received
    assert body["summary"] == summary  # the JSON field stays raw for programs
    text = body["text"]
    assert "<" not in text and ">" not in text
    assert (
        "&lt;!channel&gt; urgent" in text
        and "&lt;http://evil.example/login|https://sso.example.com&gt;" in text
    )
    assert " &amp; &lt;@U024BE7LH&gt;" in text
