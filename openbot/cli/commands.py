"""Imports the command modules so each registers its commands on `app`: every one, or only those of the
command a command line names (`openbot run …` builds none of the others: ~10 ms of its start)."""

from __future__ import annotations

# Each top-level command, by the name it has on the command line.
NAMES = (
    "bots",
    "digest",
    "doctor",
    "eval",
    "feedback",
    "fleet",
    "help",
    "history",
    "logs",
    "memory",
    "ps",
    "run",
    "skills",
    "trust",
)


def register(name: str = "") -> None:
    """Register `name`'s command; every command when `name` is not one (a typo gets typer's full answer)."""
    every = name not in NAMES
    if every or name == "bots":
        from openbot.cli import bots_cmd  # noqa: F401
    if every or name == "digest":
        from openbot.cli import digest_cmd  # noqa: F401
    if every or name == "doctor":
        from openbot.cli import doctor_cmd  # noqa: F401
    if every or name == "eval":
        from openbot.cli import eval_cmd  # noqa: F401
    if every or name == "feedback":
        from openbot.cli import feedback_cmd  # noqa: F401
    if every or name == "fleet":
        from openbot.cli import fleet_cmd  # noqa: F401
    if every or name == "help":
        from openbot.cli import help_cmd  # noqa: F401
    if every or name == "history":
        from openbot.cli import history_cmd  # noqa: F401
    if every or name in ("ps", "logs"):
        from openbot.cli import runs_cmd  # noqa: F401
    if every or name == "memory":
        from openbot.cli import memory_cmd, memory_cmd_legacy  # noqa: F401
    if every or name == "run":
        from openbot.cli import run_cmd  # noqa: F401
    if every or name == "skills":
        from openbot.cli import skills_cmd  # noqa: F401
    if every or name == "trust":
        from openbot.cli import trust_cmd  # noqa: F401
