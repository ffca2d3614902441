"""Filter and merge drivers that would run the repository's own files beside the walls.

A driver's command (`filter.<d>.clean`/`smudge`/`process`, `merge.<d>.driver`) comes from the user's git
config, but git runs it with `sh -c` in the checkout's root: a command that names a path inside the
repository (`./tools/strip.sh`, `sh strip.sh`, `python3 tools/x.py`, a program a relative `PATH` entry
finds) runs whatever the commit being checked out holds there — the agent's file, when the commit is the
agent's. openbot's own git steps on the agent's commits never run such a driver (docs/VERIFY.md,
docs/SANDBOX.md): the verification's clean checkout and a resumed run's checkout are made with it turned
off (`off_options`: the files keep their committed content), the WIP commit leaves the files it would clean
out, and the merge into the user's checkout is refused (`said`).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable
from pathlib import Path

from openbot.git.gitcmd import git_bytes
from openbot.git.userrepo import ConfigEntries

FILTER_KEYS = ("clean", "smudge", "process")
# Words of a command that are the shell's, never a path.
_SHELL = frozenset({"&&", "||", ";", "|", "&", "(", ")", "{", "}", "!", "then", "do", "else", "fi", "done"})


def repo_drivers(entries: ConfigEntries, names: Iterable[str], path: str | None = None) -> dict[str, str]:
    """`{driver: command}` (`filter.strip.smudge: ./tools/strip.sh`) of the drivers in `entries` whose
    command names a path inside the repository; `names` are the entries at the top of its tree."""
    top = set(names)
    search = os.environ.get("PATH", "") if path is None else path
    commands: dict[str, str] = {}
    for name, value in entries:
        section, _, rest = name.partition(".")
        sub, _, key = rest.rpartition(".")
        if value and sub and (section, key) in {("filter", k) for k in FILTER_KEYS} | {("merge", "driver")}:
            commands[name] = value  # the last value wins, as in git
    return {name: cmd for name, cmd in commands.items() if names_repo_path(cmd, top, search)}


def names_repo_path(command: str, top: set[str], search: str) -> bool:
    """Whether the shell command `command`, run in a repository's root, names a path inside it: a word
    that is a relative path through one of `top` (or, for the program, any relative path), or a program
    a relative `search` (PATH) entry finds first. A command the shell would read otherwise is taken as
    naming one."""
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        words = [w for w in lexer if w not in _SHELL]
    except ValueError:
        return True
    program = True
    for word in words:
        if program and "=" in word and not word.startswith(("=", "-", "/", ".")):
            continue  # VAR=value before the program
        value = word.split("=", 1)[1] if word.startswith("-") and "=" in word else word
        if _inside(value, top, program, search):
            return True
        program = False
    return False


def _inside(word: str, top: set[str], program: bool, search: str) -> bool:
    if word.startswith(("$", "`")):
        return True  # expanded by the shell: it could name anything
    if word.startswith("/") or "%" in word:
        return False  # an absolute path outside every checkout openbot makes; %f: the file's own name
    parts = [p for p in word.split("/") if p not in ("", ".")]
    if not parts or parts[0] == "..":
        return False
    if program and "/" in word:
        return True
    if parts[0] in top:
        return True
    return program and _found_relatively(word, search)


def _found_relatively(program: str, search: str) -> bool:
    """Whether `program` would be looked up in a relative PATH entry before any absolute one has it."""
    for entry in search.split(os.pathsep):
        if not entry or not os.path.isabs(entry):
            return True  # "" and "." are the current directory: the repository's root
        if os.access(os.path.join(entry, program), os.X_OK):
            return False
    return False


def top_names(git_dir: Path, commit: str) -> set[str]:
    """The entries at the top of `commit`'s tree."""
    out = git_bytes(git_dir, "ls-tree", "-z", "--name-only", commit)
    return {n for n in out.decode("utf-8", "surrogateescape").split("\0") if n}


def off_options(drivers: Iterable[str]) -> list[str]:
    """`-c` options that turn each driver of `drivers` off (command-line config beats every file)."""
    found = []
    for name in drivers:
        base = name.rsplit(".", 1)[0]
        if base.startswith("filter."):
            keys = [f"{base}.{k}=" for k in FILTER_KEYS] + [f"{base}.required=false"]
        else:
            keys = [f"{base}.driver="]
        found += [arg for key in keys for arg in ("-c", key)]
    return found


def said(drivers: dict[str, str]) -> str:
    """The one line a refusal gives: which driver, which command."""
    name, command = next(iter(drivers.items()))
    more = f" (and {len(drivers) - 1} more)" if len(drivers) > 1 else ""
    return (
        f"your git config's {name} = {command!r}{more} names a file in the repository, which the bot's "
        "commits can change: openbot does not run it outside the sandbox"
    )


def checkout_off(common_dir: Path, commit: str) -> list[str]:
    """`-c` options for openbot's own checkout of `commit` (the agent's) from the user's repository: the
    user's drivers that would run a file of `commit` are off."""
    return off_options(checkout_drivers(common_dir, commit))


def checkout_drivers(common_dir: Path, commit: str) -> dict[str, str]:
    """The user's drivers (`repo_drivers`) that a checkout of `commit` would run a file of `commit` with."""
    from openbot.git import userrepo

    entries = userrepo.config(common_dir, git_dir=True)
    if not any(name.startswith(("filter.", "merge.")) for name, _ in entries):
        return {}
    return repo_drivers(entries, top_names(common_dir, commit))
