"""Imports every command module so each registers its commands on `app`."""

from openbot.cli import (  # noqa: F401
    bots_cmd,
    digest_cmd,
    doctor_cmd,
    eval_cmd,
    fleet_cmd,
    history_cmd,
    memory_cmd,
    memory_cmd_legacy,
    run_cmd,
    skills_cmd,
    trust_cmd,
)
