"""The one exception tree of openbot; each class knows its exit code.

    OpenbotError                 exit 1, runtime failure
    ├── UsageError               exit 2, bad flag/argument or state the user must fix
    │   ├── ConfigError          exit 2, a config/skill/memory file is invalid (names file and key)
    │   ├── NotFoundError        exit 2, a named bot/skill/session/run does not exist
    │   └── ForgeError           exit 2, the forge's API refused or failed (bad token, no repository)
    ├── ModelError               exit 1, the model API failed (after retries) or refused
    ├── GitError                 exit 1, a git operation failed
    └── SandboxError             exit 2, the kernel cannot enforce the requested sandbox

Stop conditions of a run are not errors; they live in `openbot.stops`. `exit_code_of` is the one map
from how a command or a run ended to its exit code (the CLI and the run record both use it), and
`debug_enabled` the one reading of OPENBOT_DEBUG (tracebacks instead of one-line errors).
"""

from __future__ import annotations

import os

from openbot.stops import Stop

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_LIMIT, EXIT_UNVERIFIED, EXIT_OVER_BUDGET = 0, 1, 2, 3, 5, 6
EXIT_UNREVIEWED = 7


def debug_enabled() -> bool:
    """OPENBOT_DEBUG: unset, "", "0", "false", "no", "off" (any case) leave it off; "1", "true", "yes" and
    any other value turn it on (someone who set it to something wants to debug)."""
    return os.environ.get("OPENBOT_DEBUG", "").strip().lower() not in ("", "0", "false", "no", "off")


class OpenbotError(Exception):
    """Base of every error openbot reports to the user as one line."""

    exit_code = 1

    def __init__(self, message: str, *, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def one_line(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message


class UsageError(OpenbotError):
    exit_code = 2


class ConfigError(UsageError):
    """A file the user wrote is invalid; the message names the file, the key and the fix."""


class NotFoundError(UsageError):
    """A named thing does not exist; the hint suggests close names."""


class ForgeError(UsageError):
    """The forge's API (GitHub's REST API) refused a request or could not be reached: names the address,
    the status and, for 401/403, the token variables to check."""

    def __init__(self, message: str, *, hint: str = "", status: int = 0) -> None:
        super().__init__(message, hint=hint)
        self.status = status  # the HTTP status it answered; 0: no answer (unreachable, not JSON)


class ModelError(OpenbotError):
    """The model backend failed for good (auth, retries exhausted, script exhausted).

    `usage` is what the failed attempts were billed (an `agent.models.base.Usage`; typed `object` here
    because the shared modules know no wing), so budgets count them."""

    def __init__(self, message: str, *, hint: str = "", usage: object = None) -> None:
        super().__init__(message, hint=hint)
        self.usage = usage


class GitError(OpenbotError):
    pass


class SandboxError(UsageError):
    pass


def exit_code_of(ended: BaseException | None) -> int:
    """The exit code for how something ended: None = success, a stop or an error its own, else failure."""
    if ended is None:
        return EXIT_OK
    if isinstance(ended, Stop | OpenbotError):
        return ended.exit_code
    return EXIT_FAILED
