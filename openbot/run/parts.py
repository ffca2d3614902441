"""What every session of one run shares (`RunParts`), built once by the runner (run/runner.py) and handed
to each `Session` (run/session.py)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from openbot.agent.budget import Budget
from openbot.agent.context import ContextKeeper
from openbot.agent.models.base import ModelBackend
from openbot.agent.tools.base import Tool
from openbot.git.gitcmd import end_warmed
from openbot.redact import Redactor
from openbot.run.plan import RunPlan
from openbot.run.protocols import View
from openbot.run.record import Recorder
from openbot.run.workspace import Workspace
from openbot.state.conversation import Conversation
from openbot.state.history import History
from openbot.state.runstate import RunRecord
from openbot.stops import Cancel

if TYPE_CHECKING:
    from openbot.run.unchanged import Unchanged
    from openbot.run.verify import Verifier


@dataclass
class RunParts:
    """What every session of one run shares; built once by the runner."""

    plan: RunPlan
    recorder: Recorder  # the one writer of run.json
    workspace: Workspace
    history: History
    model: ModelBackend
    tools: list[Tool]
    conversation: Conversation
    context: ContextKeeper
    budget: Budget
    redactor: Redactor
    view: View
    cancel: Cancel
    take_input: Callable[[], list[str]]
    base_tokens: dict[str, int]  # what earlier invocations of a resumed run spent
    base_cost: float
    verifier: Verifier | None = None  # openbot's check at session_complete (run/verify.py)
    unchanged: Unchanged | None = None  # a completion with nothing changed is questioned once

    @property
    def record(self) -> RunRecord:
        return self.recorder.record

    def ending(self) -> None:
        """The run is ending: a tool's process waiting for a next call (the shell's sandbox server or
        spare) is killed before the records are written, so it dies while they are (`_close_tools` reaps
        it); the end's imports started on a thread are waited for (`warm_end`)."""
        for tool in self.tools:
            stop = getattr(tool, "stop_waiting", None)
            if stop is not None:
                with contextlib.suppress(Exception):  # nothing here may keep the session's record away
                    stop()
        end_warmed()

    def save_totals(self, *, final: bool = False) -> None:
        """The run record's tokens and cost: earlier invocations plus this one's budget so far."""
        base, spent = self.base_tokens, self.budget.spent
        tokens = {k: base.get(k, 0) + spent.as_dict().get(k, 0) for k in {**base, **spent.as_dict()}}
        network = self.workspace.net.tally.counts()  # earlier invocations' too
        self.recorder.totals(tokens, self.base_cost + spent.cost_usd, spent.cost_known, network, final=final)
