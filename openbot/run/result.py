"""What `openbot run` hands back: the final run record, how to resume it, and the budget figures."""

from __future__ import annotations

from dataclasses import dataclass

from openbot.errors import EXIT_FAILED
from openbot.state.runstate import RunRecord
from openbot.views.fields import verification_status, verified_text


@dataclass(frozen=True)
class RunResult:
    record: RunRecord
    resume_command: str  # "" when there is nothing to resume (the branch is gone)
    budget: dict[str, object]

    @property
    def exit_code(self) -> int:
        return self.record.exit_code if self.record.exit_code is not None else EXIT_FAILED

    def to_json(self) -> dict[str, object]:
        """The `--json` summary (and the CI step summary's input)."""
        r = self.record
        summary = {
            "run_id": r.run_id,
            "bot": r.bot,
            "project": r.project,
            "branch": r.branch,
            "base": r.base,
            "base_commit": r.base_commit,
            "repo_root": r.repo_root,  # the user's checkout the run started from: `openbot digest`
            "status": r.status,
            "exit_code": self.exit_code,
            "iterations": r.iterations,
            "summary": r.summary,
            "nothing_changed": r.nothing_changed,  # completed with the repository as it found it
            "verified": r.verified,  # true: openbot's check passed; false: it failed; null: nothing checked
            "verified_sha": r.verified_sha,
            "verification": r.verification,
            "merge_unverified": r.merge_unverified,
            "reviewed": r.reviewed,  # the `review` model's verdict: true approved, false not, null no review
            "review": r.review,
            "feedback": r.feedback,  # --feedback: each item, addressed or not, and how (run/feedback.py)
            "action": r.action,
            "action_message": r.action_message,
            "reason": r.reason,
            "tokens": r.tokens,
            "cost_usd": round(r.cost_usd, 6),
            "cost_known": r.cost_known,
            "network": r.network,  # connections through its proxies: allowed, refused, bytes each way
            "command_count": r.command_count,
            "session_ids": r.session_ids,
            "wip_commits": r.wip_commits,
            "budget": self.budget,
            "resume_command": self.resume_command,
        }
        summary["verification_status"] = verification_status(summary)  # passed | failed | none
        summary["verified_text"] = verified_text(summary)  # the line the report says of the check
        return summary
