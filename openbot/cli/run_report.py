"""`openbot run`'s end-of-run lines on the terminal (and the CI step summary): what the run did, in a few
lines under the live view — status, counts and cost, branch, summary, verification, review, action."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from openbot.views.escapes import clip
from openbot.views.fields import (
    failed_output,
    feedback_text,
    money,
    reviewed_text,
    status_text,
    verified_text,
)

if TYPE_CHECKING:
    from openbot.run.result import RunResult
    from openbot.views.live import LiveView


def report(view: LiveView, result: RunResult, in_ci: bool) -> None:
    r = result.record
    lines = [
        f"openbot: run {r.run_id} {status_text(result.to_json())}" + (f": {r.reason}" if r.reason else ""),
        f"  iterations {r.iterations} · commands {r.command_count} · tokens {sum(r.tokens.values()):,}"
        f" · cost {money(r.cost_usd, r.cost_known)}",
    ]
    if r.branch:
        lines.append(f"  branch {r.branch}" + (f" (from {r.base})" if r.base else ""))
    if r.summary:
        first = r.summary.split("\n", 1)[0]  # not splitlines: a `\r` in it is shown, not a line end
        lines.append(f"  summary: {clip(first, 200)}")
    verified = verified_text(result.to_json())
    if verified:
        lines.append(f"  {verified}")
        lines += [f"    | {line}" for line in failed_output(result.to_json())]  # why it failed
    if reviewed := reviewed_text(result.to_json()):
        lines.append(f"  {reviewed}")
    if feedback := feedback_text(result.to_json()):
        lines.append(f"  {feedback}")
    if r.action:
        lines.append(f"  action: {r.action}" + (f" — {r.action_message}" if r.action_message else ""))
    if result.resume_command:
        lines.append(f"  resume: {result.resume_command}")
    for line in lines:
        view.line(line)
    if in_ci:
        from openbot.views.ci_summary import write_step_summary

        summary_path = os.environ.get("GITHUB_STEP_SUMMARY")
        if not write_step_summary(result.to_json(), os.environ) and summary_path:
            view.line(f"!! could not write the step summary to {summary_path}")
