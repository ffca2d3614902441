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

Under bwrap (`--under-init`) the launcher is pid 2 of the command's PID namespace, and pid 1 is bwrap's
init, whose parent-death signal is the switch that kills the namespace when openbot dies. bwrap arms it
only after forking the launcher (bwrap.c `do_init`), so a command started at once can outlive an openbot
killed before the init got the CPU back (tests/sandbox/test_openbot_killed.py). The launcher therefore
waits for the init to arm it first: it leaves an orphan that exits at once, which only the init's wait
loop — entered right after arming — can reap. If openbot died before that (its end of the command's output
pipe is closed), the init armed too late to help: the command is not run.

Exit codes when the command never starts: 125 the sandbox could not be applied (the command is NOT run
unconfined), 126 the command cannot be executed, 127 the command was not found.
"""

from __future__ import annotations

import os
import sys
from types import ModuleType

SETUP_FAILED = 125


def _load(name: str) -> ModuleType:
    """A module of this directory loaded as `_load_landlock` does (forward.py, the proxy relay)."""
    if __package__:
        import importlib

        return importlib.import_module(f"openbot.sandbox.{name}")
    if os.path.dirname(os.path.abspath(__file__)) not in sys.path:
        sys.path.append(os.path.dirname(os.path.abspath(__file__)))
    return __import__(name)


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
    proxy = [o.removeprefix("--proxy=") for o in options if o.startswith("--proxy=")]
    known = ("--write=", "--command-fd=", "--proxy=")
    flags = ("--allow-tcp", "--under-init")
    unknown = [o for o in options if o not in flags and not o.startswith(known)]
    if unknown or bool(argv) == bool(command_fd) or len(command_fd) > 1:
        print(f"openbot sandbox: bad arguments {args!r}", file=sys.stderr)
        print(USAGE, file=sys.stderr)
        return SETUP_FAILED
    landlock = _load_landlock()
    forward = _load("forward") if proxy else None
    try:
        listener = forward.listen() if forward else None  # bound before Landlock denies every bind
        landlock.drop_capabilities()
        ports = (forward.PORT,) if forward else ()
        landlock.restrict_self(writable, allow_tcp="--allow-tcp" in options, connect_ports=ports)
    except (landlock.LandlockError, OSError) as e:
        print(f"openbot sandbox: {e}; the command was not run", file=sys.stderr)
        return SETUP_FAILED
    if forward and listener:
        _start_relay(forward, listener, proxy[0])
    if "--under-init" in options:
        _wait_for_init()
    env = None
    if command_fd:
        try:
            cwd, argv, env = _read_command(int(command_fd[0]))
            os.chdir(cwd)
        except (OSError, ValueError, IndexError):
            return SETUP_FAILED  # openbot went away or sent no command: nothing to run
    if "--under-init" in options and _output_unread():
        return SETUP_FAILED  # openbot is gone: nothing would stop the command
    return _exec(argv, env)


USAGE = (
    "usage: launch.py [--allow-tcp] [--under-init] [--proxy=SOCKET] [--write=PATH]..."
    " (-- command [args...] | --command-fd=N)"
)
INIT_WAIT_SECS = 30.0  # not expected to be reached: then the command runs rather than not at all


def _wait_for_init() -> None:
    """Return once pid 1 (bwrap's init) waits for its children, i.e. has armed its parent-death signal.

    An orphan is reparented to pid 1, which reaps it only in that wait loop: until then it stays a zombie
    that signal 0 still reaches. Two forks make one; the middle process says the orphan's pid."""
    import time

    try:
        read_end, write_end = os.pipe()
        middle = os.fork()
    except OSError:  # no process to spare: the command could not start either; let it say so
        return
    if middle == 0:
        try:
            orphan = os.fork()
            if orphan > 0:
                os.write(write_end, orphan.to_bytes(4, "little"))
        finally:
            os._exit(0)  # both, at once: the orphan goes to pid 1
    os.close(write_end)
    os.waitpid(middle, 0)
    data = os.read(read_end, 4)
    os.close(read_end)
    deadline = time.monotonic() + INIT_WAIT_SECS
    while len(data) == 4 and time.monotonic() < deadline:
        try:
            os.kill(int.from_bytes(data, "little"), 0)
        except ProcessLookupError:
            return
        time.sleep(0.0005)


def _start_relay(forward: ModuleType, listener: object, target: str) -> None:
    """forward.py's relay in a child; this process goes on to exec the command without the listener."""
    if os.fork() == 0:
        try:
            forward.serve(listener, target)
        finally:
            os._exit(0)
    listener.close()  # type: ignore[attr-defined]


def _output_unread() -> bool:
    """Is stdout a pipe nobody reads any more? openbot reads a command's output: then openbot is gone."""
    import select

    try:
        if os.fstat(1).st_mode & 0o170000 != 0o010000:  # not a FIFO: no reader to ask after
            return False
        poll = select.poll()
        poll.register(1, 0)  # a pipe's write end without readers reports POLLERR
        return any(events & select.POLLERR for _, events in poll.poll(0))
    except OSError:
        return False


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
