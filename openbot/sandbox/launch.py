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

With `--status-fd=M` as well (and `--pid-1`) it is a server: it stays pid 1 of its sandbox and spawns each
command it is sent on fd N, one after another, for a whole session (serve.py).

Under bwrap (`--pid-1`) the launcher is pid 1 of the command's PID namespace (bwrap's `--as-pid-1`: no
init of bwrap's), and the command it execs stays pid 1: when it exits, the kernel kills everything left in
the namespace. bwrap arms this process's parent-death signal (`--die-with-parent`: SIGKILL when bwrap
dies, which dies with openbot) before it execs the launcher — so there is no init arming late and nothing
to wait for. It can still be armed too late to help: when openbot died before that (bwrap released the
namespace, then openbot was killed before the signal was set). The launcher therefore runs nothing when
the reader of its output pipe (openbot) is gone (exit 125); once it has looked, openbot's death kills it.

Exit codes when the command never starts: 125 the sandbox could not be applied (the command is NOT run
unconfined), 126 the command cannot be executed, 127 the command was not found.
"""

from __future__ import annotations

import os
import signal
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
    status_fd = [o.removeprefix("--status-fd=") for o in options if o.startswith("--status-fd=")]
    known = ("--write=", "--command-fd=", "--proxy=", "--status-fd=")
    flags = ("--allow-tcp", "--pid-1")
    unknown = [o for o in options if o not in flags and not o.startswith(known)]
    # A server kills every process of its namespace after each command: only as pid 1 of its own, and
    # not beside the proxy relay (which it would kill too).
    bad_server = bool(status_fd) and (len(status_fd) > 1 or "--pid-1" not in options or bool(proxy))
    if unknown or bad_server or bool(argv) == bool(command_fd) or len(command_fd) > 1:
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
    if status_fd:
        return int(_load("serve").serve(int(command_fd[0]), int(status_fd[0]), _start))
    env = None
    if command_fd:
        try:
            cwd, argv, env = _read_command(int(command_fd[0]))
            os.chdir(cwd)
        except (OSError, ValueError, IndexError):
            return SETUP_FAILED  # openbot went away or sent no command: nothing to run
    if "--pid-1" in options and _output_unread():
        return SETUP_FAILED  # openbot is gone: nothing would stop the command
    return _exec(argv, env)


USAGE = (
    "usage: launch.py [--allow-tcp] [--pid-1] [--proxy=SOCKET] [--write=PATH]..."
    " (-- command [args...] | --command-fd=N [--status-fd=M])"
)


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


def _start(fields: list[bytes], batch: bool = False) -> tuple[int, int]:
    """The server's start of one command (serve.py): (its pid, 0), or (0, the exit code to report) when
    it could not start. The fields are those of `_read_command`. posix_spawn (vfork-like: no copy of this
    process's page tables, ~1 ms less a command than fork + exec); the server changes its own working
    directory for it (it is single-threaded, and the next command sets its own)."""
    text = [os.fsdecode(f) for f in fields]
    count = int(text[1])
    argv, pairs = text[2 : 2 + count], text[2 + count :]
    env = dict(p.split("=", 1) for p in pairs if "=" in p)
    try:
        os.chdir(text[0])
    except OSError:
        return 0, SETUP_FAILED
    if not argv:
        return 0, SETUP_FAILED
    path = _which(argv[0], env.get("PATH", os.defpath))
    try:
        if path is None:
            raise FileNotFoundError
        # A session of its own, as when it was pid 1 of a sandbox of its own; SIGPIPE and SIGXFSZ as
        # _exec leaves them. The server's own fds are close-on-exec.
        sigdef = (signal.SIGPIPE, signal.SIGXFSZ)
        if batch:  # the server's SCHED_BATCH (serve.py) is its own: the command starts SCHED_OTHER, as before
            other = (os.SCHED_OTHER, os.sched_param(0))
            return os.posix_spawn(path, argv, env, setsid=True, setsigdef=sigdef, scheduler=other), 0
        return os.posix_spawn(path, argv, env, setsid=True, setsigdef=sigdef), 0
    except FileNotFoundError:
        print(f"openbot sandbox: {argv[0]}: command not found", file=sys.stderr, flush=True)
        return 0, 127
    except OSError as e:
        print(f"openbot sandbox: {argv[0]}: {e.strerror}", file=sys.stderr, flush=True)
        return 0, 126


def _which(name: str, search: str) -> str | None:
    """`name` looked up on `search` as execvp does (the command's PATH, not the server's)."""
    if "/" in name:
        return name
    for directory in search.split(os.pathsep):
        candidate = os.path.join(directory or ".", name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def _exec(argv: list[str], env: dict[str, str] | None = None) -> int:
    # Python starts with SIGPIPE and SIGXFSZ ignored and exec keeps an ignored signal ignored: the command
    # gets the defaults a shell would give it (`yes | head -1` ends on SIGPIPE, not "Broken pipe" errors).
    for signum in (signal.SIGPIPE, signal.SIGXFSZ):
        signal.signal(signum, signal.SIG_DFL)
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
