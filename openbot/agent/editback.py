"""Back to the start (work_mode "edits"): narrowed tries at a failure that the session's own edits made,
undone again and again, put back every file as the session found it. On more-itertools 0e6acdf9b6 a 1.5B
model's first reply to "raise for negative n in chunked()" added the guard and, above it, a copy of the
function's `if n is None: raise` — a new failure on its own line, which 20 narrowed tries (each undone)
never removed: the tries were all made from the state its first edit had made.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from openbot.agent import editwords as say
from openbot.agent.focus import Focus

BACK_AFTER = 4  # narrowed tries undone in a row before going back to the start


@dataclass
class Start:
    """What a session's edits started from: each file's text before its first edit (None: it did not
    exist) and the check's failure before any edit."""

    texts: dict[str, str | None] = field(default_factory=dict)
    failure: tuple[str, str] = ("", "")  # the file and the error the check failed with before any edit
    undone: int = 0  # narrowed tries undone since the last one kept

    def due(self, place: str, error: str) -> bool:
        """Go back now: enough tries were undone, at a failure the session's edits made (not the one
        the session started from)."""
        return self.undone >= BACK_AFTER and (place, error) != self.failure

    def changed(self, now: dict[str, str | None]) -> dict[str, str]:
        """The files to write back (`now`: their text now); a file the session created stays."""
        return {p: t for p, t in self.texts.items() if t is not None and now.get(p) != t}


def note(error: str, undone: int, committed: str) -> str:
    """What the model is told of the files put back."""
    return (
        f"[openbot] Your edits made the check fail another way ({error or 'a new failure'}) and {undone} "
        f"tries at it failed, so the files are back as they were before your edits. {committed}".rstrip()
    )


def message(said: str, failing: str, about: Focus, task: str) -> str:
    """The message a new conversation starts from when there are no lines of the code to narrow to: what
    was put back, the failure as it is again, the function it is about, the task."""
    direction = say.CHANGE_FUNCTION.format(path=about.path, name=about.name)
    return f"{said}\n\nThe check fails: {failing}\n{about.shown()}\n\n# Task\n{task}\n\n{direction}\n"
