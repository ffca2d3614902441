"""The turn in work_mode "edits" (agent/editmode.py acts on each reply): Turn's loop with no tools sent."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from openbot.agent.editmode import EditMode
from openbot.agent.editwords import CUT
from openbot.agent.models.base import ModelReply, ModelRequest
from openbot.agent.replies import Verdict
from openbot.agent.turn import Turn
from openbot.events import Notice
from openbot.state.messages import blocks_of, text_block
from openbot.stops import StepLimit

RESTARTED = (
    "the conversation (~{:,} tokens) was restarted from the files as they are now and openbot's latest "
    "message (no model call)"
)

NARROWED = (
    "the conversation (~{:,} tokens) was restarted from the lines the check fails on, the error and the "
    "task: the model's reply had not moved the check's failure"
)


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

    def _compact(self) -> None:
        """A new segment that is the first message again, with the files as they are now and openbot's
        latest message (the check's failure) — no summary asked of the model: on a 1.5B CPU model the
        summary was 38 s of a 4-minute run, and the first message it kept showed the files as they were."""
        if self.edits.restart is None:
            return super()._compact()
        messages = self.conversation.messages
        last = messages[-1] if messages and messages[-1]["role"] == "user" else None
        said = "\n\n".join(b["text"] for b in blocks_of(last) if b["type"] == "text") if last else ""
        self.context.compactions += 1
        self._begin(self.edits.restart(said), RESTARTED)

    def _begin(self, first: str, how: str, **data: object) -> None:
        """A new segment that is only `first` (the first message made again, or EditMode.narrowed), said
        as a `context_compacted` notice (`how`, `data`: what started it)."""
        before = self.context.measure(self.conversation.messages)
        self.conversation.start_segment({"role": "user", "content": [text_block(first)]})
        self.keep_from = 0
        self.context.reset()
        said = {"tokens_before": before, "summary_chars": 0, "compactions": self.context.compactions, **data}
        self.ctx.sink.emit(Notice(kind="context_compacted", message=how.format(before), data=said))

    def _request(self) -> ModelRequest:
        return dataclasses.replace(
            super()._request(), tools=[], resample=self.edits.same, draw=self.edits.draws
        )

    def _execute(self, reply: ModelReply) -> None:
        said = self.edits.act(reply.text, self.ctx, self.result.steps, reply.truncated)
        narrowed = self.edits.narrowed()  # the error, the lines that fail, the task: the model's earlier
        if narrowed:  # copies of the file, which it copied again, are no longer in front of it
            self._begin(narrowed, NARROWED, narrowed=True)
        else:
            self.conversation.add_user_text(said)
        if self.ctx.cancel.is_set():
            raise self.ctx.cancel.interrupted()
        if self.result.steps >= self.limits.max_steps:
            raise StepLimit(f"reached max_turn_steps ({self.limits.max_steps})")
