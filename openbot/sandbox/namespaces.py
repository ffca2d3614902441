"""The outer wall: bubblewrap (`bwrap`) puts each confined command in namespaces of its own.

    --new-session          no controlling terminal: TIOCSTI and other games with openbot's tty are gone
    --unshare-pid          its own PID namespace whose pid 1 is the command itself (--as-pid-1: no init
    --as-pid-1             process of bwrap's, one process less per command); when the command exits, or
                           openbot (--die-with-parent, armed before the command starts), the kernel kills
                           everything left in it
    --unshare-net          (network = false) its own network namespace: only a loopback of its own, so no
                           TCP, MPTCP, TCP Fast Open or UDP reaches the host or beyond
    --unshare-ipc/-uts     no System V IPC or hostname shared with the host
    --cap-drop ALL         no capability, even when openbot runs as root; bwrap also sets no_new_privs
    --proc /proc --dev /dev   a /proc showing only its own processes (not openbot's environ or fds) and a
                           minimal /dev with a fresh devpts (no host terminals)
    --ro-bind / /          the filesystem read-only; /tmp and /var/tmp (and /run when network = false)
                           replaced by empty tmpfs, so host Unix sockets there (ssh-agent, docker, dbus,
                           X11) do not exist; then the paths the run needs are bound back: read-only ones
                           first, the writable ones over them

Landlock stays inside as the second wall (launch.py). `probe` runs bwrap once per process with these same
options, because bwrap is often installed where user namespaces are disabled (containers, Ubuntu's
AppArmor restriction) and then fails at the first command.
"""

from __future__ import annotations

import functools
import os
import shutil
from collections.abc import Iterable
from pathlib import Path

from openbot import gate
from openbot.processes import become_subreaper, reap_orphans

# Directories where host services keep Unix sockets; replaced by an empty tmpfs in the sandbox. /run
# also holds resolv.conf's target on systemd machines, so it stays when the command may use the network.
ALWAYS_HIDDEN = ("/tmp", "/var/tmp")
HIDDEN_OFFLINE = ("/run", "/var/run")
INSTALL_HINT = (
    "install bubblewrap (Debian/Ubuntu: `apt-get install bubblewrap`, Fedora: `dnf install bubblewrap`)"
)
USERNS_HINT = (
    "bwrap needs unprivileged user namespaces: `sysctl -w user.max_user_namespaces=15000`; "
    "on Ubuntu >= 23.10 also `sysctl -w kernel.apparmor_restrict_unprivileged_userns=0` "
    "(or an AppArmor profile for bwrap); "
    "in a container, run it with user namespaces allowed (e.g. docker --security-opt seccomp=unconfined)"
)


def hidden_dirs(network: bool) -> tuple[str, ...]:
    dirs = ALWAYS_HIDDEN if network else ALWAYS_HIDDEN + HIDDEN_OFFLINE
    # /var/run is usually a symlink to /run: hiding /run hides it, and bwrap cannot mount over a symlink.
    return tuple(d for d in dirs if os.path.isdir(d) and not os.path.islink(d))


def _under(path: Path, dirs: Iterable[str]) -> bool:
    # Lexical, as `is_relative_to` is, on the strings (the paths are absolute and normalised): this runs
    # for every grant of every command, and pathlib's version costs ~1 ms a command.
    text = str(path)
    return any(text == d or text.startswith(d.rstrip("/") + "/") for d in dirs)


def bwrap_argv(
    exe: str,
    *,
    writable: Iterable[Path],
    readable: Iterable[Path],
    network: bool,
    protected: Iterable[Path] = (),
    concealed: Iterable[Path] = (),
) -> list[str]:
    """bwrap and its options, up to and including the `--` before the command. `protected` paths inside a
    writable one are bound read-only over it, last; `concealed` directories are empty (a tmpfs over each,
    after every bind: a link out of the command's tree that points there reaches nothing)."""
    hidden = hidden_dirs(network)
    granted = [p for p in writable if p.exists()]
    bound = [str(p) for p in granted]
    argv = [exe, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for d in hidden:
        argv += ["--tmpfs", d]
    # Shallower paths first, so a writable worktree inside a read-only git dir is mounted over it.
    binds = sorted(
        {(p, "--ro-bind") for p in readable if _under(p, hidden) and p.exists()}
        | {(p, "--bind") for p in granted},
        key=lambda b: (len(b[0].parts), b[1] != "--ro-bind", str(b[0])),
    )
    for path, how in binds:
        argv += [how, str(path), str(path)]
    for path in protected:
        if _under(path, bound) and path.exists():
            argv += ["--ro-bind", str(path), str(path)]
    for path in concealed:
        if path.is_dir() and not any(p == path or _under(p, [str(path)]) for p in granted):
            argv += ["--tmpfs", str(path), "--remount-ro", str(path)]
    for d in hidden:  # bwrap made the bind targets' parents there; writes to them would vanish silently
        argv += ["--remount-ro", d]
    argv += ["--unshare-pid", "--as-pid-1", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if not network:
        argv.append("--unshare-net")
    return [*argv, "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--"]


@functools.lru_cache(maxsize=2)
def probe(forced_off: bool) -> tuple[str, str]:
    """(path of a working bwrap or "", one line saying what works or exactly what is missing)."""
    if forced_off:
        return "", "bubblewrap is forced unavailable by OPENBOT_SANDBOX_FORCE_UNAVAILABLE"
    exe = shutil.which("bwrap")
    if exe is None:
        return "", f"bubblewrap (bwrap) is not installed: {INSTALL_HINT}"
    argv = bwrap_argv(exe, writable=(), readable=(), network=False) + ["true"]
    become_subreaper()  # its init outlives its bwrap: openbot reaps it
    try:
        out = gate.run(
            gate.SANDBOX_PROBE, argv, capture_output=True, text=True, timeout=30, stdin=gate.DEVNULL
        )
    except (OSError, gate.TimeoutExpired) as e:
        return "", f"bubblewrap ({exe}) does not run: {e}"
    finally:
        reap_orphans()
    if out.returncode != 0:
        why = (out.stderr.strip().splitlines() or [f"exit code {out.returncode}"])[-1]
        return "", f"bubblewrap ({exe}) cannot create namespaces here ({why}): {USERNS_HINT}"
    return exe, f"bubblewrap ({exe}): PID, network, IPC namespaces, no capabilities, own /proc"
