"""What one verification found (`Outcome`), how its commands are collected, and the words the agent gets
when it failed (`feedback`): the next turn's message, with the tail of what failed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from openbot.events import Command, Event

if TYPE_CHECKING:
    from openbot.git.home import Homecoming
    from openbot.state.runstate import RunRecord


@dataclass(frozen=True)
class Verification(Event):
    """The `verification` event (docs/EVENTS.md): kept here beside what it reports, like every event a
    frozen dataclass serialized by `events.to_record`. `checks`: one {command, source ("bot", "team" or
    "setup"), exit_code, timed_out, duration_ms, output, full_output_path} per command run, `output` as
    compacted (the whole of it then in the session's outputs/, at full_output_path)."""

    type: ClassVar[str] = "verification"
    attempt: int
    attempts: int  # verify_attempts: the failed checks after which the run ends `unverified`
    sha: str  # the commit checked out ("" when it could not be)
    passed: bool
    checks: list[dict[str, object]] = field(default_factory=list)
    reason: str = ""  # what failed, one line ("" when it passed)
    uncommitted: list[str] = field(default_factory=list)  # `git status --porcelain` lines: not verified
    stopped_processes: int = 0  # the agent's processes stopped before it ran
    note: str = ""  # where the result was recorded on the branch (refs/notes/openbot)
    tail: str = ""  # the last lines of the first failed check's output, redacted: what the user is shown


NOTHING_CHECKED = "not verified: nothing checked the work"  # views/fields.py says it where a run ends
TAIL_LINES, TAIL_CHARS = 40, 4000  # of a failed command's output, in the feedback to the agent


@dataclass(frozen=True)
class Outcome:
    sha: str
    checks: tuple[dict[str, object], ...]
    uncommitted: tuple[str, ...] = ()
    stopped: int = 0
    error: str = ""  # the checkout or the setup failed: nothing (or not everything) could run

    @property
    def failed(self) -> list[dict[str, Any]]:
        return [c for c in self.checks if c["exit_code"] != 0]

    @property
    def passed(self) -> bool:
        return not self.error and not self.failed and bool(self.checks)

    def reason(self) -> str:
        if self.error:
            return self.error
        return "; ".join(f"`{c['command']}` {how(c)}" for c in self.failed)


SHOWN_LINES, SHOWN_CHARS = 8, 1200  # of the first failed check's output, where the user is told it failed


def shown_tail(outcome: Outcome, redact: Callable[[str], str]) -> str:
    """The end of the first failed check's output, redacted, for the user: the terminal, `history`, the
    HTML page and the notification say why the check failed, not only that it exited non-zero."""
    for check in outcome.failed:
        lines = [line for line in str(check["output"] or "").splitlines() if line.strip()]
        if lines:
            return redact("\n".join(lines[-SHOWN_LINES:])[-SHOWN_CHARS:])
    return ""


def how(check: dict[str, Any]) -> str:
    if check["timed_out"]:
        return f"timed out after {check['duration_ms'] / 1000:.0f} s"
    return "was killed" if check["exit_code"] is None else f"exited with {check['exit_code']}"


class Collect:
    """Keeps the verification's Command events out of the session's log (they are not the agent's)."""

    def __init__(self, source: str) -> None:
        self.source, self.checks = source, list[dict[str, object]]()

    def emit(self, event: Event) -> None:
        if isinstance(event, Command):
            self.checks.append(
                {
                    "command": event.command,
                    "source": self.source,
                    "exit_code": event.exit_code,
                    "timed_out": event.timed_out,
                    "duration_ms": event.duration_ms,
                    "output": event.output,
                    "full_output_path": event.full_output_path,  # set when `output` was compacted
                }
            )


def feedback(outcome: Outcome, attempt: int, attempts: int, *, edits: bool = False) -> str:
    """The next turn's message: what failed, the tail of its output, and what was not part of the check
    (`edits`: work_mode "edits", where the model writes files and openbot commits them)."""
    where = f"commit {outcome.sha[:12]}" if outcome.sha else "your branch"
    done = "DONE" if edits else "session_complete"
    lines = [
        f"[openbot] {done} was not accepted: openbot checked out your committed work ({where}) in "
        f"a clean sandbox without network and ran the verify commands (attempt {attempt} of {attempts}).",
        f"Failed: {outcome.reason()}",
    ]
    for check in outcome.failed[:3]:
        tail = check["output"].splitlines()[-TAIL_LINES:]
        lines += [f"--- output of `{check['command']}` (end) ---", "\n".join(tail)[-TAIL_CHARS:]]
        if check.get("full_output_path"):
            lines.append(f"(full output: {check['full_output_path']})")
    passed = [c["command"] for c in outcome.checks if c["exit_code"] == 0 and c["source"] != "setup"]
    if passed:
        lines.append("Passed: " + ", ".join(f"`{c}`" for c in passed))
    if outcome.uncommitted:
        lines.append(
            "Not part of the check (uncommitted in your checkout; commit what should count): "
            + "; ".join(outcome.uncommitted)
        )
    if outcome.stopped:
        lines.append(f"{outcome.stopped} process(es) you left running were stopped.")
    left = attempts - attempt
    again = "reply with the corrected file(s)" if edits else "commit, and call session_complete again"
    lines.append(
        f"Fix it, {again}. {left} more failed check(s) end the run unverified, and nothing is merged."
    )
    return "\n".join(lines)


def merge_refused(rec: RunRecord, home: Homecoming | None, wip: str | None, action: str) -> str:
    """Why a `merge` of the imported tip is left for review, "" when it is not: only the bot's own
    commits are merged, never the scratch it left uncommitted (`wip`); and verified work is merged exactly
    as verified — a tip that moved after the check (a process the stop missed) was never checked."""
    tip = home.tip if home is not None else ""
    if action != "merge":
        return ""
    if wip:
        return f"not merged: the bot left uncommitted work (saved as WIP commit {wip[:12]})"
    if rec.verified is True and tip != rec.verified_sha:
        moved = f"the branch moved after openbot verified {rec.verified_sha[:12]}"
        return f"not merged: {moved}; {tip[:12]} was never checked"
    return ""
