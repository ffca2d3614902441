"""Why a turn or a run stops: small exceptions that carry what must be recorded, and the words for it.

    TurnEnded (Exception)          ends one turn; the session is recorded and the run goes on
    ├── EndTurn                    the model answered without a tool call        session `completed`
    └── AbortTurn                  cut short:
        ├── StepLimit              max_turn_steps model calls                    session `limit`
        └── Stuck                  the same tool calls max_repeats times         session `limit`
    Stop (BaseException)           ends the run
    ├── Completed                  session_complete was called                   run `completed`, exit 0
    ├── LimitReached               a budget or max_iterations                    run `limit`, exit 3
    ├── Refused                    the model refused (stop_reason "refusal")     run `refused`, exit 4
    ├── Unverified                 openbot's check of the work failed every try  run `unverified`, exit 5
    │   └── Unreviewed             the `review` model never approved             run `unreviewed`, exit 7
    ├── OverBudget                 the budget ledger (budget.toml) refused a call run `over_budget`, exit 6
    └── Interrupted                ctrl-c / SIGTERM / SIGHUP                     run `interrupted`, 128+signum

They are not errors of the user's making (see `openbot.errors`, which maps every ending to an exit code).
"""

from __future__ import annotations

import signal
import threading
from dataclasses import dataclass
from typing import ClassVar, Literal

# The statuses a session (metadata.json) and a run (run.json) are recorded with; docs/EVENTS.md.
Status = Literal[
    "running",
    "completed",
    "limit",
    "interrupted",
    "refused",
    "unverified",
    "unreviewed",
    "over_budget",
    "failed",
]
# What the bot asks session_complete to do with its branch; "none": nothing could be applied.
Action = Literal["merge", "review", "discard"]
ACTIONS: tuple[Action, ...] = ("merge", "review", "discard")
CutShort = Literal["step_limit", "stuck"]
TurnOutcome = Literal["end_turn"] | CutShort


@dataclass(frozen=True)
class Completion:
    """What the bot said when it called session_complete."""

    summary: str
    action: Action
    as_text: bool = False  # read from the reply's text (agent/textreply.py): merges only verified work


class Cancel(threading.Event):
    """The run's cancel flag, and the signal that raised it (set before the flag, so readers see both)."""

    def __init__(self) -> None:
        super().__init__()
        self.signum = 0

    def cancel(self, signum: int) -> None:
        self.signum = signum
        self.set()

    def interrupted(self) -> Interrupted:
        return Interrupted(self.signum or signal.SIGINT)


class TurnEnded(Exception):
    """Ends the turn; `Turn.run` returns it in its result, and the session records its status and reason."""

    outcome: ClassVar[TurnOutcome]
    status: ClassVar[Status] = "limit"

    def __init__(self, detail: str = "") -> None:
        super().__init__(detail)
        self.detail = detail

    @property
    def reason(self) -> str:
        """What the session's record says of this ending."""
        return self.detail


class EndTurn(TurnEnded):
    """The model's reply asked for no tool: its turn is over. `detail` is the API's stop_reason."""

    outcome = "end_turn"
    status = "completed"

    @property
    def reason(self) -> str:
        return ""  # the turn ended as turns do: nothing to explain


class AbortTurn(TurnEnded):
    """The turn was cut short; `detail` says why, in figures."""

    outcome: ClassVar[CutShort]


class StepLimit(AbortTurn):
    outcome = "step_limit"


class Stuck(AbortTurn):
    outcome = "stuck"


class Stop(BaseException):
    """A BaseException, like KeyboardInterrupt: code that catches Exception (the SDK's own retry loop
    among it) must not swallow a ctrl-c or a budget stop."""

    status: ClassVar[Status] = "failed"
    exit_code: int = 1

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Completed(Stop):
    """The bot called session_complete: the run ends after this turn, and its action is applied."""

    status = "completed"
    exit_code = 0

    def __init__(self, completion: Completion) -> None:
        super().__init__("")
        self.completion = completion


class LimitReached(Stop):
    """A budget (cost, tokens, wall time) or the iteration limit was reached: status `limit`, exit 3."""

    status = "limit"
    exit_code = 3

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class Refused(Stop):
    """The model refused (`stop_reason: "refusal"`): nothing from that reply ran and it was not kept.

    The API's docs say to change the conversation before going on; a bot cannot rephrase its own task,
    so the run ends: status `refused`, exit 4, the reason naming the category and the explanation."""

    status = "refused"
    exit_code = 4

    def __init__(self, message: str, details: dict[str, object]) -> None:
        super().__init__(message)
        self.details = details


class Unverified(Stop):
    """The bot called session_complete, and openbot's own check of its committed work (the `verify`
    commands, openbot/run/verify.py) failed `verify_attempts` times: status `unverified`, exit 5. Its
    `completion` is what the bot last said; the branch is kept, and `merge` is not applied."""

    status: ClassVar[Status] = "unverified"
    exit_code = 5

    def __init__(self, message: str, completion: Completion) -> None:
        super().__init__(message)
        self.completion = completion


class Unreviewed(Unverified):
    """openbot verified the work, but the bot's `review` model asked for changes `review.attempts` times
    (openbot/run/review.py): status `unreviewed`, exit 7; like `unverified`, the branch is kept, unmerged."""

    status = "unreviewed"
    exit_code = 7


class OverBudget(Stop):
    """The budget ledger shared by every run of this OPENBOT_HOME (`$OPENBOT_HOME/budget.toml`,
    openbot/state/ledger.py) refused the next model call: a daily or weekly cap, overall, for this bot
    or for this repository, would be passed. Status `over_budget`, exit 6; the work is kept as a limit's."""

    status = "over_budget"
    exit_code = 6


class Interrupted(Stop):
    """ctrl-c (exit 130), SIGTERM (exit 143) or SIGHUP (exit 129)."""

    status = "interrupted"

    def __init__(self, signum: int, message: str = "") -> None:
        super().__init__(message or f"interrupted by {signal.Signals(signum).name}")
        self.signum = signum
        self.exit_code = 128 + signum
