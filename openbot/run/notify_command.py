"""What a `[[notify]]` command runs and with what: only what the user controls (docs/SANDBOX.md, "Steps
openbot runs itself"). It runs outside the sandbox, so neither its code nor its environment may come from
the agent's tree:

- `command[0]` absolute or `~/…`: the user's own file, as written;
- a bare name (`sh`, `curl`): looked up on the user's PATH, without its relative entries (they would name
  the checkout);
- a relative path (`./tools/page-me.sh`): that path from the top of the repository, as it is in the run's
  base commit (the commit the run started from), copied by git into a private directory — never the
  checkout, which after a merge (or under `--no-worktree`) holds the agent's version.

It runs in that private directory (removed afterwards), with MINIMAL_ENV plus the names its `env` lists,
never a model key.
"""

from __future__ import annotations

import os
import posixpath
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from openbot.config.notify import NotifyTarget
from openbot.envpolicy import NEVER
from openbot.errors import GitError

MINIMAL_ENV = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_*", "TZ")


class Refused(Exception):
    """The command cannot be run from a trusted source; the message says why, in one line."""


@dataclass(frozen=True)
class CommandSource:
    git_dir: Path | None = None  # the repository's common git dir; None without a repository
    base_commit: str = ""  # the commit the run started from; "" when there is none
    api_key_env: str = ""  # the bot's own model key variable, never passed


def command_env(target: NotifyTarget, environ: Mapping[str, str], source: CommandSource) -> dict[str, str]:
    """MINIMAL_ENV and the target's `env` names; PATH without relative entries; never a model key."""
    patterns = [*MINIMAL_ENV, *target.env]
    never = {*NEVER, source.api_key_env}
    env = {k: v for k, v in environ.items() if k not in never and _matches(k, patterns)}
    if "PATH" in env:
        env["PATH"] = _absolute_path(env["PATH"])
    return env


def argv_for(
    target: NotifyTarget, environ: Mapping[str, str], source: CommandSource, into: Path
) -> list[str]:
    """The command line to run in `into` (a private directory): `command[0]` resolved as the module says."""
    first, rest = target.command[0], list(target.command[1:])
    if first.startswith("~"):
        return [os.path.expanduser(first), *rest]
    if os.path.isabs(first):
        return [first, *rest]
    if "/" not in first:
        found = shutil.which(first, path=_absolute_path(environ.get("PATH", os.defpath)))
        if found is None:
            raise Refused(f"{first} is not on PATH")
        return [found, *rest]
    return [str(_from_base(first, source, into)), *rest]


def _from_base(written: str, source: CommandSource, into: Path) -> Path:
    from openbot.git.gitcmd import git_bytes

    path = posixpath.normpath(written)
    if path == ".." or path.startswith("../"):
        raise Refused(f"{written} leaves the repository")
    if source.git_dir is None or not source.base_commit:
        raise Refused(f"{written} is a repository path, but this run has no base commit to read it from")
    base = source.base_commit[:12]
    try:
        listed = git_bytes(source.git_dir, "ls-tree", "-z", source.base_commit, "--", path)
        mode, kind, oid = listed.split(b"\t", 1)[0].decode().split() if listed else ("", "", "")
        if not listed or kind != "blob" or mode not in ("100755", "100644"):
            raise Refused(f"{path} is not a file in the run's base commit {base}")
        data = git_bytes(source.git_dir, "cat-file", "blob", oid)
    except GitError as e:
        raise Refused(f"cannot read {path} from the run's base commit {base}: {e}") from e
    script = into / posixpath.basename(path)
    fd = os.open(script, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o700)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    return script


def _absolute_path(path: str) -> str:
    return os.pathsep.join(p for p in path.split(os.pathsep) if os.path.isabs(p))


def _matches(name: str, patterns: list[str]) -> bool:
    return any(name.startswith(p[:-1]) if p.endswith("*") else name == p for p in patterns)
