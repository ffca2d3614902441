"""Why a turn or a run stops early: small exceptions that carry what must be recorded.

They are not errors of the user's making (see `openbot.errors`); the runner turns each into a session
status and a run exit code.
"""

from __future__ import annotations


class Stop(BaseException):
    """A BaseException, like KeyboardInterrupt: code that catches Exception (the SDK's own retry loop
    among it) must not swallow a ctrl-c or a budget stop."""

    status = "failed"
    exit_code = 1

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class LimitReached(Stop):
    """A budget (cost, tokens, wall time) or the iteration limit was reached: status `limit`, exit 3."""

    status = "limit"
    exit_code = 3

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class Interrupted(Stop):
    """ctrl-c (exit 130) or SIGTERM (exit 143)."""

    status = "interrupted"

    def __init__(self, signum: int, message: str = "") -> None:
        import signal

        name = signal.Signals(signum).name
        super().__init__(message or f"interrupted by {name}")
        self.signum = signum
        self.exit_code = 128 + signum
