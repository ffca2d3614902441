"""Telling someone how a run ended: each `[[notify]]` target whose `on` list has the run's status gets the
run summary — a webhook as a JSON POST (with a Slack-compatible `text`), a command as JSON on stdin.

Delivery never decides the run's outcome: a failure is one warning line, and all targets together hold the
exit for at most DEADLINE_SECS (they are delivered in parallel; whatever is still going then is abandoned).
Webhooks are retried on connection errors, 429 and 5xx; commands are not (they may have acted already).
URLs are shown as written in config.md (`${SLACK_WEBHOOK_URL}`), never expanded; every message is redacted.
The payload is documented in docs/EVENTS.md.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openbot import gate
from openbot.config import envrefs
from openbot.config.notify import NotifyTarget
from openbot.events import EventLog, EventSink, Notice, TeeSink
from openbot.run.notify_command import CommandSource, Refused, argv_for, command_env
from openbot.views.escapes import shorten
from openbot.views.fields import failed_output, money, reviewed_text, status_text, verified_text

if TYPE_CHECKING:
    from openbot.run.plan import RunPlan
    from openbot.run.protocols import View
    from openbot.run.result import RunResult

DEADLINE_SECS = 10.0
NO_SOURCE = CommandSource()  # no repository: a repository-relative command is not run
ATTEMPTS = 3
BACKOFF_SECS = (0.5, 1.5)
ICONS = {
    "completed": ":white_check_mark:",
    "failed": ":x:",
    "limit": ":hourglass:",
    "interrupted": ":stop_sign:",
    "unverified": ":warning:",
    "unreviewed": ":warning:",
    "over_budget": ":money_with_wings:",
}


@dataclass(frozen=True)
class Delivery:
    target: NotifyTarget
    ok: bool
    detail: str  # one line: what happened (redacted)


def payload(summary: dict[str, object], repo: str) -> dict[str, object]:
    """The run summary (`openbot run --json`) plus `repo` and a Slack-compatible `text`."""
    body = {**summary, "repo": repo}
    body["text"] = slack_text(body)
    return body


def slack_text(p: dict[str, Any]) -> str:
    status = p.get("status", "")
    head = f"{ICONS.get(status, '')} openbot: *{p.get('bot', '')}* {status_text(p)}".strip()
    if p.get("reason"):
        head += f" ({p['reason']})"
    lines = [head]
    tokens = sum((p.get("tokens") or {}).values())
    where = f"branch `{p['branch']}`" if p.get("branch") else "no branch"
    cost = money(p.get("cost_usd", 0), p.get("cost_known") is not False, places=2)
    n = p.get("iterations", 0)
    lines.append(f"{where} · {n} iteration{'' if n == 1 else 's'} · {tokens:,} tokens · {cost}")
    if p.get("summary"):
        lines.append(shorten(str(p["summary"]).splitlines()[0], 300))
    if verified_text(p):
        lines.append(verified_text(p))
        lines += [f"> {line}" for line in failed_output(p)]  # why it failed: the end of its output
    if reviewed_text(p):
        lines.append(reviewed_text(p))
    if p.get("action"):
        lines.append(
            f"action: {p['action']}" + (f" — {p['action_message']}" if p.get("action_message") else "")
        )
    if p.get("resume_command"):
        lines.append(f"resume: `{p['resume_command']}`")
    return slack_escape("\n".join(lines))


def slack_escape(text: str) -> str:
    """Slack's three escapes: the agent's words (summary, reason) must not become `<!channel>` mentions or
    `<http://x|y>` links that show one address and open another. Our own formatting uses none of them."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def deliver(
    targets: list[NotifyTarget],
    body: dict[str, object],
    environ: Mapping[str, str],
    redact: Callable[[str], str],
    deadline_secs: float = DEADLINE_SECS,
    source: CommandSource = NO_SOURCE,
) -> list[Delivery]:
    """Deliver `body` to every target that wants this status, in parallel, within `deadline_secs`."""
    wanted = [t for t in targets if body.get("status") in t.on]
    results: dict[int, Delivery] = {}
    deadline = time.monotonic() + deadline_secs

    def one(target: NotifyTarget) -> None:
        try:
            results[target.index] = _deliver_one(target, body, environ, deadline, source)
        except Exception as e:  # a bug here must not turn into a failed run
            results[target.index] = Delivery(target, False, f"{type(e).__name__}: {e}")

    threads = [threading.Thread(target=one, args=(t,), daemon=True) for t in wanted]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()) + 0.2)
    out = []
    for t in wanted:
        found = results.get(t.index) or Delivery(t, False, f"gave up after {deadline_secs:g} s")
        out.append(Delivery(t, found.ok, redact(found.detail)))
    return out


def _deliver_one(
    target: NotifyTarget,
    body: dict[str, object],
    environ: Mapping[str, str],
    deadline: float,
    source: CommandSource,
) -> Delivery:
    data = json.dumps(body).encode()
    if target.command:
        private = Path(tempfile.mkdtemp(prefix="openbot-notify-"))
        try:
            return _run_command(target, data, environ, deadline, source, private)
        finally:
            shutil.rmtree(private, ignore_errors=True)
    try:
        url = envrefs.expand(target.url, environ, "notify", f"notify[{target.index}].url")
    except Exception as e:
        return Delivery(target, False, str(e))
    detail = ""
    for attempt in range(ATTEMPTS):
        remaining = deadline - time.monotonic()
        if remaining <= 0.05:
            break
        ok, retry, detail = _post(url, data, min(5.0, remaining))
        if ok or not retry:
            return Delivery(target, ok, detail)
        if attempt < len(BACKOFF_SECS):
            time.sleep(min(BACKOFF_SECS[attempt], max(0.0, deadline - time.monotonic() - 0.1)))
    return Delivery(target, False, f"{detail} (gave up after {attempt + 1} attempt(s))")


def _post(url: str, data: bytes, timeout: float) -> tuple[bool, bool, str]:
    """(delivered, worth retrying, what happened)."""
    request = urllib.request.Request(
        url, data=data, method="POST", headers={"Content-Type": "application/json", "User-Agent": "openbot"}
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return True, False, f"HTTP {response.status}"
    except urllib.error.HTTPError as e:
        return False, e.code == 429 or e.code >= 500, f"HTTP {e.code} {e.reason}"
    except (urllib.error.URLError, OSError) as e:
        reason = getattr(e, "reason", e)
        return False, True, f"cannot connect: {reason}"


def _run_command(
    target: NotifyTarget,
    data: bytes,
    environ: Mapping[str, str],
    deadline: float,
    source: CommandSource,
    private: Path,
) -> Delivery:
    """Run the command as notify_command says: a trusted file, in `private`, with a minimal environment."""
    try:
        argv = argv_for(target, environ, source, private)
        proc = gate.popen(
            gate.NOTIFY_COMMAND,
            argv,
            stdin=gate.PIPE,
            stdout=gate.DEVNULL,
            stderr=gate.PIPE,
            cwd=private,
            env=command_env(target, environ, source),
            named=target.env,
            start_new_session=True,
        )
    except Refused as e:
        return Delivery(target, False, f"not run: {e}")
    except OSError as e:
        return Delivery(target, False, f"cannot start: {e.strerror or e}")
    try:
        _, err = proc.communicate(data, timeout=max(0.1, deadline - time.monotonic()))
    except gate.TimeoutExpired:
        _kill_group(proc)
        return Delivery(target, False, f"still running after {DEADLINE_SECS:g} s: stopped")
    if proc.returncode != 0:
        tail = err.decode(errors="replace").strip().splitlines()[-1:] or [""]
        return Delivery(
            target, False, f"exit code {proc.returncode}" + (f": {tail[0][:200]}" if tail[0] else "")
        )
    return Delivery(target, True, "exit code 0")


def _kill_group(proc: gate.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.communicate()  # reaps it and closes the pipes


def report(deliveries: list[Delivery], sink: EventSink) -> None:
    for d in deliveries:
        if d.ok:
            sink.emit(Notice(kind="notified", message=f"notified {d.target.label}: {d.detail}"))
        else:
            why = f"WARNING: could not notify {d.target.label}: {d.detail}"
            sink.emit(Notice(kind="run_warning", message=why))


def notify_run(plan: RunPlan, result: RunResult, view: View) -> None:
    """Deliver the ended run's summary to the bot's `[[notify]]` targets; warnings go to the terminal."""
    from openbot.config.integrations import notify_targets, secret_values
    from openbot.redact import Redactor

    targets = notify_targets(plan.config)
    if not targets:
        return
    redactor = Redactor.from_env(os.environ, also=secret_values(plan.config, os.environ))
    repo = str(plan.repo.workdir) if plan.repo is not None else str(plan.cwd)
    body = redactor.redact_obj(payload(result.to_json(), repo))
    git_dir = plan.repo.common_dir if plan.repo is not None else None
    source = CommandSource(git_dir, result.record.base_commit, plan.config.api_key_env)
    deliveries = deliver(targets, body, os.environ, redactor.redact, source=source)
    log = EventLog(result.record.dir / "events.jsonl", plan.redactor.redact)  # the run's own log
    try:
        report(deliveries, TeeSink(log, view))
    finally:
        log.close()
