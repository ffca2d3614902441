"""The sandbox launcher: `python -I -S launch.py [--allow-tcp] [--write=PATH]... -- argv...` confines itself,
then execs argv.

With `--command-fd=N` instead of argv it confines itself, then waits for its command on fd N: openbot
starts it (inside bwrap) ahead of time, while the model is still answering, and sends the working
directory, argv and environment once the command is known — so neither bwrap's nor Python's start-up
is paid between the model's answer and the command. The policy is applied before anything is read.

Confinement happens here, in a fresh single-threaded process, and not in `preexec_fn` (unsafe when the
parent has threads). `SandboxPolicy.wrap` runs this file by path with `-I -S`, so start-up loads only
ctypes and `landlock.py` next to this file — not openbot's package, not site-packages, not even json
(7 ms of start-up here). The policy is only paths and a flag; nothing secret is on the command line.

Exit codes when the command never starts: 125 the sandbox could not be applied (the command is NOT run
unconfined), 126 the command cannot be executed, 127 the command was not found.
"""

from __future__ import annotations

import os
import sys
from types import ModuleType

SETUP_FAILED = 125


def _load_landlock() -> ModuleType:
    """landlock.py from this directory, without importing the openbot package (and its dependencies).

    A plain import from this directory added to the end of the path: `importlib.util` alone would cost
    more than the rest of the launcher's imports (~5 ms a command). Under `-I -S` the path holds only
    the standard library, which has no module of that name."""
    if __package__:
        from openbot.sandbox import landlock

        return landlock
    sys.path.append(os.path.dirname(os.path.abspath(__file__)))
    return __import__("landlock")


def main(args: list[str]) -> int:
    split = args.index("--") if "--" in args else len(args)
    options, argv = args[:split], args[split + 1 :]
    writable = [o.removeprefix("--write=") for o in options if o.startswith("--write=")]
    command_fd = [o.removeprefix("--command-fd=") for o in options if o.startswith("--command-fd=")]
    known = ("--write=", "--command-fd=")
    unknown = [o for o in options if o != "--allow-tcp" and not o.startswith(known)]
    if unknown or bool(argv) == bool(command_fd) or len(command_fd) > 1:
        print(f"openbot sandbox: bad arguments {args!r}", file=sys.stderr)
        print(USAGE, file=sys.stderr)
        return SETUP_FAILED
    landlock = _load_landlock()
    try:
        landlock.drop_capabilities()
        landlock.restrict_self(writable, allow_tcp="--allow-tcp" in options)
    except landlock.LandlockError as e:
        print(f"openbot sandbox: {e}; the command was not run", file=sys.stderr)
        return SETUP_FAILED
    env = None
    if command_fd:
        try:
            cwd, argv, env = _read_command(int(command_fd[0]))
            os.chdir(cwd)
        except (OSError, ValueError, IndexError):
            return SETUP_FAILED  # openbot went away or sent no command: nothing to run
    return _exec(argv, env)


USAGE = "usage: launch.py [--allow-tcp] [--write=PATH]... (-- command [args...] | --command-fd=N)"


def _read_command(fd: int) -> tuple[str, list[str], dict[str, str]]:
    """What openbot sends on `fd`, NUL-separated: the working directory, the number of arguments, the
    arguments, then KEY=VALUE for each environment variable (none of which can hold a NUL)."""
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    os.close(fd)
    fields = [os.fsdecode(f) for f in b"".join(chunks).split(b"\0")]
    count = int(fields[1])
    argv, pairs = fields[2 : 2 + count], fields[2 + count :]
    if not argv:
        raise ValueError("no command")
    return fields[0], argv, dict(p.split("=", 1) for p in pairs if "=" in p)


def _exec(argv: list[str], env: dict[str, str] | None) -> int:
    try:
        if env is None:
            os.execvp(argv[0], argv)
        os.execvpe(argv[0], argv, env)
    except FileNotFoundError:
        print(f"openbot sandbox: {argv[0]}: command not found", file=sys.stderr)
        return 127
    except OSError as e:
        print(f"openbot sandbox: {argv[0]}: {e.strerror}", file=sys.stderr)
        return 126
    return SETUP_FAILED  # not reached: exec returns only by raising


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
