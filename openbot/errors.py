"""The one exception tree of openbot; each class knows its exit code.

    OpenbotError                 exit 1, runtime failure
    ├── UsageError               exit 2, bad flag/argument or state the user must fix
    │   ├── ConfigError          exit 2, a config/skill/memory file is invalid (names file and key)
    │   └── NotFoundError        exit 2, a named bot/skill/session/run does not exist
    ├── ModelError               exit 1, the model API failed (after retries) or refused
    ├── GitError                 exit 1, a git operation failed
    └── SandboxError             exit 2, the kernel cannot enforce the requested sandbox

Stop conditions of a run are not errors; they live in `openbot.run.plan`.
The CLI maps these to exit codes in exactly one place (`openbot.cli.app.main`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from openbot.agent.models.base import Usage


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


class ModelError(OpenbotError):
    """The model backend failed for good (auth, retries exhausted, script exhausted).

    `usage` is what the failed attempts were billed (a `models.base.Usage`), so budgets count them."""

    def __init__(self, message: str, *, hint: str = "", usage: Usage | None = None) -> None:
        super().__init__(message, hint=hint)
        self.usage = usage


class GitError(OpenbotError):
    pass


class SandboxError(UsageError):
    pass
