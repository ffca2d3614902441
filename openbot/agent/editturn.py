"""The turn in work_mode "edits" (agent/editmode.py acts on each reply): Turn's loop with no tools sent."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from openbot.agent.editmode import CUT, EditMode
from openbot.agent.models.base import ModelReply, ModelRequest
from openbot.agent.replies import Verdict
from openbot.agent.turn import Turn
from openbot.stops import StepLimit


@dataclass
class EditTurn(Turn):
    """The turn in work_mode "edits": the same loop (`Turn.run`, `step`: limits → query → execute), with
    no tools sent, no calls read from the text, no wrap-up nudge, and each reply acted on by `edits`."""

    edits: EditMode = field(default_factory=lambda: EditMode([]))
    nudge: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        self._acted = True  # a reply without an edit is `EditMode.act`'s to judge, not "called no tool"
        self.protocol = "native"  # no call is read from the text (agent/textreply.py); none is sent either

    def _judge(self, reply: ModelReply, verdict: Verdict) -> Verdict:
        cut = reply.truncated and not reply.tool_uses and not reply.empty
        return (
            Verdict("run", note=CUT, event=verdict.event) if cut else verdict
        )  # "continue" would make a pathless file

    def _request(self) -> ModelRequest:
        return dataclasses.replace(super()._request(), tools=[])

    def _execute(self, reply: ModelReply) -> None:
        said = self.edits.act(reply.text, self.ctx, self.result.steps, reply.truncated)
        self.conversation.add_user_text(said)
        if self.ctx.cancel.is_set():
            raise self.ctx.cancel.interrupted()
        if self.result.steps >= self.limits.max_steps:
            raise StepLimit(f"reached max_turn_steps ({self.limits.max_steps})")
