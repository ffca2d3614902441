"""Which environment variables the agent's commands see: an allowlist, never the user's whole environment.

A bot runs for hours executing commands a model chose, so its children get only what a shell needs to
work (ALLOWED), the git identity variables (so the agent's commits carry the user's name in CI, where it
often comes from the environment), and whatever the bot's config lists under `env_passthrough`.

Deliberately not passed: anything else named GIT_* (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE would point
the agent's git at the user's own checkout), and the model credentials in NEVER.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from openbot.errors import UsageError

ALLOWED = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_*", "TERM", "TZ", "TMPDIR", "SHELL")
GIT_IDENTITY = ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL")
# The model key is openbot's, not the agent's: with it a command could spend the user's money on its own
# API calls, or leak it into a commit. Never passed, even when listed in env_passthrough.
NEVER = frozenset({"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY", "OPENAI_ADMIN_KEY"})
# The forge's token is for the steps that read the forge beside the walls (gate step forge.read): with it a
# command could push, merge or comment as the user. Not passed to the agent's commands or its checks even
# when env_passthrough lists them; an MCP server whose own `env` names one still gets it (the user's choice
# for that server).
FORGE_TOKENS = frozenset({"GH_TOKEN", "GITHUB_TOKEN"})

_SECRET_RE = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|(?:^|_)AUTH(?:_|$)", re.IGNORECASE)
NAME_RE = re.compile(  # an environment variable's name
    r"^[A-Za-z_][A-Za-z0-9_]*$"
)


def is_secret_name(name: str) -> bool:
    """Does this variable name look like it holds a secret (KEY, TOKEN, SECRET, PASSWORD, CREDENTIAL…)?"""
    return bool(_SECRET_RE.search(name))


def check_pattern(entry: str) -> str:
    """An `env_passthrough` entry is an exact name or `PREFIX_*`; anything else is a UsageError."""
    name = entry[:-1] if entry.endswith("*") else entry
    if not name or not NAME_RE.match(name):
        raise UsageError(
            f"env_passthrough entry {entry!r} is not a variable name or PREFIX_* pattern",
            hint='write exact names like "NPM_CONFIG_REGISTRY" or prefixes like "CARGO_*"',
        )
    return entry


def model_key_passed_by(entry: str, api_key_env: str = "") -> str:
    """The model key variable (NEVER, or the one the bot's `api_key_env` names) that an `env` entry — an
    exact name or `PREFIX_*` — would pass, or "": config checks refuse such entries by this."""
    return next((k for k in sorted({*NEVER, api_key_env} - {""}) if _matches(k, [entry])), "")


def _matches(name: str, patterns: Iterable[str]) -> bool:
    return any(name.startswith(p[:-1]) if p.endswith("*") else name == p for p in patterns)


def child_env(
    environ: Mapping[str, str], passthrough: Iterable[str] = (), *, forge_token: bool = False
) -> dict[str, str]:
    """The environment for the agent's commands: ALLOWED + GIT_IDENTITY + `passthrough`, minus NEVER and
    (unless `forge_token`: an MCP server's own list) FORGE_TOKENS.

    A passthrough name that looks secret is still passed (the user asked for it); callers must not log
    the names or values this returns — the redactor hides such values wherever they appear."""
    patterns = [*ALLOWED, *GIT_IDENTITY, *(check_pattern(p) for p in passthrough)]
    never = NEVER if forge_token else NEVER | FORGE_TOKENS
    return {k: v for k, v in environ.items() if k not in never and _matches(k, patterns)}


# Variables that name where programs and modules are looked up: a server started beside the agent must
# find nothing of the agent's tree through them (issue 32, M2).
SEARCH_PATHS = (
    "PATH",
    "PYTHONPATH",
    "NODE_PATH",
    "PERL5LIB",
    "RUBYLIB",
    "GEM_PATH",
    "CLASSPATH",
    "LD_LIBRARY_PATH",
)
SEARCH_ROOTS = ("VIRTUAL_ENV", "PYTHONHOME", "PYTHONUSERBASE", "PYTHONSTARTUP")


def without_paths_into(env: Mapping[str, str], tree: Path) -> dict[str, str]:
    """`env` less every search-path entry that lies in `tree` or is relative (read against a working
    directory someone else chose), and less each single-path variable pointing into `tree`."""
    root = os.path.realpath(tree)

    def outside(entry: str) -> bool:
        if not os.path.isabs(entry):
            return False
        real = os.path.realpath(entry)
        return real != root and not real.startswith(root.rstrip("/") + "/")

    kept = {k: v for k, v in env.items() if k not in SEARCH_ROOTS or (v and outside(v))}
    for name in SEARCH_PATHS:
        if name in kept:
            entries = [e for e in kept[name].split(os.pathsep) if outside(e)]
            kept[name] = os.pathsep.join(entries)
            if not entries:
                del kept[name]
    return kept


def own_venv_bin() -> Path | None:
    """The `bin/` of the virtualenv openbot itself runs from (None when it runs from a base Python)."""
    import sys

    return Path(sys.prefix) / "bin" if sys.prefix != sys.base_prefix else None


def without_own_venv(env: Mapping[str, str]) -> dict[str, str]:
    """`env` with openbot's own virtualenv off PATH: an activated venv of openbot's must not make the
    bot's and its checks' `python3` openbot's interpreter, with openbot's packages and not the project's
    (issue 35: a check ran `python3 -m pytest` in openbot's venv and found no pytest)."""
    own, kept = own_venv_bin(), dict(env)
    if own is None or "PATH" not in kept:
        return kept
    mine = os.path.realpath(own)
    kept["PATH"] = os.pathsep.join(e for e in kept["PATH"].split(os.pathsep) if os.path.realpath(e) != mine)
    return kept


def bots_python(env: Mapping[str, str]) -> str:
    """What `python3` the bot's commands get, as said by `bots show` and `doctor`."""
    import shutil

    found = shutil.which("python3", path=without_own_venv(env).get("PATH", os.defpath))
    own = own_venv_bin()
    note = f" (openbot's own virtualenv {own.parent} is left off the bot's PATH)" if own else ""
    return (found or "none on PATH: the bot's commands cannot run python3") + note
