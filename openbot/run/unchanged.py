"""A completion with nothing changed is questioned once: memory is not the repository.

A small model stores its answer with `memory set` and calls session_complete with the repository as it
found it. So when the bot calls session_complete (with `merge` or `review`: a `discard` keeps nothing)
and its run repository holds no commit past the run's base and nothing uncommitted, the first such call
is not accepted: the bot's next turn is told so, and asked to make the change or to confirm that none
is needed. Where the bot has `verify` commands, they check the completion first: one they refuse is
answered with what failed (the change to make), and only one they pass is questioned. Confirmed, the run
completes with `nothing_changed: true` in run.json and its `--json` summary, and every place it ends
says "completed: nothing changed in the repository".
"""

from __future__ import annotations

from collections.abc import Callable

from openbot.events import EventSink, Notice
from openbot.run.record import Recorder
from openbot.run.workspace import Workspace
from openbot.stops import Completion

QUESTION = (
    "[openbot] session_complete was not accepted yet: nothing in the repository changed during this run "
    "(no new commit, nothing uncommitted). Memory is not the repository. If the task needs a change, make "
    "it and commit it; if it truly needs none, call session_complete again saying why."
)
QUESTION_EDITS = (  # work_mode "edits": the model writes files and says DONE (agent/editmode.py)
    "[openbot] DONE was not accepted yet: nothing in the repository changed during this run. If the task "
    "needs a change, write the file(s) in your reply; if it truly needs none, reply DONE again saying why."
)
SAID = "completed: nothing changed in the repository"
ASKED = "session_complete with nothing changed in the repository"


class Unchanged:
    """Whether the run's repository changed, asked at each session_complete; the question is put once."""

    def __init__(
        self,
        workspace: Workspace,
        recorder: Recorder,
        uncommitted: Callable[[], tuple[str, ...]],
        ask: bool = True,  # question_unchanged: else only recorded
    ) -> None:
        self.workspace, self.recorder, self.uncommitted = workspace, recorder, uncommitted
        self.ask, self.asked = ask, False

    def question(self, completion: Completion, sink: EventSink) -> str | None:
        """The question for the bot's next turn, the first time nothing changed; None: the completion
        stands (the run's record says whether nothing changed)."""
        unchanged = completion.action != "discard" and self._nothing_changed()
        self.recorder.unchanged(unchanged)
        if not unchanged:
            return None
        if self.ask and not self.asked:
            self.asked = True
            said = f"{ASKED}: asked to make it or confirm"
            sink.emit(Notice(kind="nothing_changed", message=said, data={"questioned": True, "final": False}))
            return QUESTION_EDITS if self.workspace.plan.work.mode == "edits" else QUESTION
        said = f"{SAID}: the bot confirmed it" if self.asked else SAID
        sink.emit(
            Notice(kind="nothing_changed", message=said, data={"questioned": self.asked, "final": True})
        )
        return None

    def _nothing_changed(self) -> bool:
        """No commit past the base on the run's branch and nothing uncommitted in its checkout (False
        where it cannot be known: a run without a run repository)."""
        from openbot.git.verifytree import tip_of

        rr = self.workspace.wt
        if rr is None or tip_of(rr) != rr.base_commit:
            return False
        return not self.uncommitted()
