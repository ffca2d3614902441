"""The one writer of a run's run.json: the others return what happened, typed, and `Recorder` records it.

Workspace.open  → Opened   where the run works (checkout, branch, base)
Workspace.close → Closed   where the work went (branch, WIP commit, action) or why saving failed
Session         → session_opened / session_closed (its id, summary, commands) and the totals
Runner          → started / ended (status, exit code, reason)

Verifier        → verifying / verified / explained (openbot's check of the work, run/verify.py)
Reviewer        → reviewed (run/review.py); FeedbackCheck → fed_back (run/feedback.py)
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from openbot.state.runstate import RunRecord
from openbot.stops import Status


@dataclass(frozen=True)
class Opened:
    """Where the run's agent works, as `Workspace.open` set it up."""

    workdir: str
    branch: str
    base_commit: str
    base: str = ""  # the user's branch the run started from (or the commit, short)
    empty_branch_deleted: bool = False  # still so: a resume without a worktree did not bring it back


@dataclass(frozen=True)
class Closed:
    """How `Workspace.close` left the work: `failure` says why it could not be brought home or its action
    applied (None: it was); `action` is "" when no action was asked for or applied."""

    branch: str = ""  # "" = unchanged
    wip_commit: str = ""  # the WIP commit that saved the uncommitted work, if any
    action: str = ""
    action_message: str = ""
    empty_branch_deleted: bool = False
    failure: str | None = None


class Recorder:
    """Owns `record` (run.json) for one run: every change to it goes through here, and is saved."""

    def __init__(self, record: RunRecord) -> None:
        self.record = record

    def started(self) -> None:
        """This process runs the run now (a resumed record starts over as `running`)."""
        rec = self.record
        rec.status, rec.exit_code, rec.reason, rec.pid = "running", None, "", os.getpid()
        rec.nothing_changed = False  # said of this invocation's completion, if it completes

    def opened(self, where: Opened) -> None:
        """Saved at once: run.json names the checkout before anything runs in it."""
        rec = self.record
        rec.workdir, rec.branch, rec.base_commit = where.workdir, where.branch, where.base_commit
        rec.base, rec.empty_branch_deleted = where.base, where.empty_branch_deleted
        rec.save()

    def confined(self, tmp_dir: str) -> None:
        self.record.tmp_dir = tmp_dir  # a later run removes it should this one be killed

    def session_opened(self, session_id: str) -> None:
        self.record.session_ids.append(session_id)
        self.record.iterations += 1
        self.record.save()

    def session_closed(self, summary: str, command_count: int) -> None:
        self.record.summary = summary or self.record.summary
        self.record.command_count += command_count

    def totals(
        self,
        tokens: dict[str, int],
        cost_usd: float,
        cost_known: bool,
        network: dict[str, int],
        *,
        final: bool = False,
    ) -> None:
        """The run's tokens, cost and connections so far, earlier invocations included; `final`: still
        written on a full disk."""
        rec = self.record
        rec.tokens, rec.cost_usd, rec.cost_known = tokens, cost_usd, rec.cost_known and cost_known
        rec.network = network if any(network.values()) else {}
        rec.save(final=final)

    def closed(self, done: Closed) -> None:
        rec = self.record
        rec.branch = done.branch or rec.branch
        if done.wip_commit:
            rec.wip_commits.append(done.wip_commit)
        if done.action or done.action_message:
            rec.action, rec.action_message = done.action, done.action_message
        rec.empty_branch_deleted = rec.empty_branch_deleted or done.empty_branch_deleted

    def summarised(self, summary: str) -> None:
        """A run that did not complete: what stopped it and what it did (run/stopped_summary.py)."""
        self.record.summary = summary

    def verifying(self, merge_unverified: bool, anew: bool) -> None:
        """openbot checks the work at session_complete (run/verify.py); `anew`: forget an earlier verdict."""
        rec = self.record
        rec.merge_unverified = merge_unverified
        if anew:
            rec.verified, rec.verified_sha, rec.verification = None, "", {}

    def verified(self, passed: bool, sha: str, summary: dict[str, object]) -> None:
        rec = self.record
        rec.verified, rec.verified_sha, rec.verification = passed, sha, summary
        rec.save()

    def reviewed(self, approved: bool, summary: dict[str, object]) -> None:
        """The `review` model's verdict on the verified commit (run/review.py)."""
        rec = self.record
        rec.reviewed, rec.review = approved, summary
        rec.save()

    def fed_back(self, summary: dict[str, object]) -> None:
        """The `--feedback` items and which the bot addressed, and how (run/feedback.py)."""
        self.record.feedback = summary
        self.record.save()

    def unchanged(self, nothing_changed: bool) -> None:
        """At session_complete: whether the run's repository is as the run found it (run/unchanged.py)."""
        self.record.nothing_changed = nothing_changed

    def explained(self, action: str, message: str) -> None:
        """Why the action is not what the bot asked (an unverified merge): said after it was applied."""
        self.record.action, self.record.action_message = action, message

    def ended(self, status: Status, exit_code: int, reason: str = "") -> None:
        self.record.status, self.record.exit_code = status, exit_code
        self.record.nothing_changed = self.record.nothing_changed and status == "completed"
        if reason:
            self.record.reason = reason
