"""Linux Landlock through ctypes: probe the kernel's ABI, and confine the calling process for good.

The launcher imports this module before every sandboxed command, so it imports only `ctypes` and `os`.
A ruleset reads the whole filesystem, writes only beneath the given paths (plus a few devices), never
creates device nodes, and — unless TCP is allowed — neither connects nor binds TCP sockets.
See https://docs.kernel.org/userspace-api/landlock.html for the kernel side.
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat

# Landlock came after the syscall-table unification, so every architecture but alpha (x86_64, aarch64,
# arm, riscv, ...) uses these generic numbers.
_SYS_CREATE_RULESET = 444
_SYS_ADD_RULE = 445
_SYS_RESTRICT_SELF = 446
_PR_SET_NO_NEW_PRIVS = 38
_CREATE_RULESET_VERSION = 1 << 0
_RULE_PATH_BENEATH = 1
_RULE_NET_PORT = 2

# Filesystem access rights, with the ABI that introduced each.
EXECUTE = 1 << 0
WRITE_FILE = 1 << 1
READ_FILE = 1 << 2
READ_DIR = 1 << 3
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13  # ABI 2: without it (ABI 1) renames/links across directories are always denied
TRUNCATE = 1 << 14  # ABI 3
NET_BIND_TCP = 1 << 0  # ABI 4
NET_CONNECT_TCP = 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1

READ = EXECUTE | READ_FILE | READ_DIR
WRITE = WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_DIR | MAKE_REG | MAKE_SOCK | MAKE_FIFO | MAKE_SYM
WRITE |= REFER | TRUNCATE
# Handled but never granted: a root process could otherwise mknod the disk's block device in a
# writable directory and write the raw disk. IOCTL_DEV (ABI 5) is deliberately not handled, so terminal
# and device ioctls keep working as they do outside the sandbox.
NEVER = MAKE_CHAR | MAKE_BLOCK
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE  # all a rule on a non-directory may hold

# Devices that ordinary commands write to (`> /dev/null`, terminals); /dev/shm backs POSIX semaphores
# (Python multiprocessing) and is a tmpfs, so creating files there touches no user data.
DEVICES = (
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
)
SCRATCH = ("/dev/shm",)


class LandlockError(Exception):
    """The ruleset could not be built or applied; the process must not run the command."""


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _NetPortAttr(ctypes.Structure):
    _fields_ = [("allowed_access", ctypes.c_uint64), ("port", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1  # the kernel struct is __attribute__((packed)): 12 bytes
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


_libc: ctypes.CDLL | None = None


def _syscall(number: int, *args: object) -> int:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
        _libc.syscall.restype = ctypes.c_long
    result = _libc.syscall(ctypes.c_long(number), *args)
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return int(result)


def abi_version() -> tuple[int, str]:
    """(ABI version, why it is 0): 0 means this kernel cannot enforce Landlock at all."""
    if os.uname().sysname != "Linux":
        return 0, f"Landlock needs Linux (this is {os.uname().sysname})"
    if os.uname().machine == "alpha":
        return 0, "Landlock syscall numbers differ on alpha"
    try:
        flags = ctypes.c_uint32(_CREATE_RULESET_VERSION)
        return _syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0), flags), ""
    except OSError as e:
        if e.errno == errno.ENOSYS:
            return 0, "the kernel has no Landlock (needs Linux >= 5.13 with CONFIG_SECURITY_LANDLOCK)"
        if e.errno == errno.EOPNOTSUPP:
            return 0, "Landlock is disabled at boot (add `landlock` to the kernel's lsm= parameter)"
        return 0, f"probing Landlock failed: {e}"
    except AttributeError as e:  # a libc without syscall()
        return 0, f"cannot call the kernel from Python: {e}"


def handled_fs(abi: int) -> int:
    """The filesystem rights this ABI knows, so a ruleset never names one the kernel would reject."""
    rights = READ | WRITE | NEVER
    return rights & ~(REFER if abi < 2 else 0) & ~(TRUNCATE if abi < 3 else 0)


def _add_path_rule(ruleset_fd: int, path: str, access: int, missing_ok: bool) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError as e:
        if missing_ok and e.errno == errno.ENOENT:  # fewer writable paths only narrows the sandbox
            return
        raise LandlockError(f"cannot open {path} for a Landlock rule: {e.strerror}") from None
    try:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            access &= FILE_RIGHTS
        attr = _PathBeneathAttr(allowed_access=access, parent_fd=fd)
        _syscall(
            _SYS_ADD_RULE,
            ctypes.c_int(ruleset_fd),
            ctypes.c_int(_RULE_PATH_BENEATH),
            ctypes.byref(attr),
            ctypes.c_uint32(0),
        )
    except OSError as e:
        raise LandlockError(f"cannot add a Landlock rule for {path}: {e.strerror}") from None
    finally:
        os.close(fd)


def restrict_self(writable: list[str], *, allow_tcp: bool, connect_ports: tuple[int, ...] = ()) -> int:
    """Confine this process (and everything it execs) for good; returns the ABI used. Raises LandlockError.
    Without `allow_tcp`, TCP may connect to `connect_ports` only (the proxy relay's, forward.py)."""
    abi, why = abi_version()
    if abi < 1:
        raise LandlockError(f"Landlock is not available: {why}")
    if not allow_tcp and abi < 4:
        raise LandlockError(f"Landlock ABI {abi} cannot block TCP (needs ABI 4, Linux >= 6.7)")
    fs = handled_fs(abi)
    attr = _RulesetAttr(handled_access_fs=fs)
    if not allow_tcp:
        attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP  # no port rules: every port is denied
    if abi >= 6:
        # Signals reach only processes in this sandbox; abstract Unix sockets (dbus, X11) count as network.
        attr.scoped = SCOPE_SIGNAL | (0 if allow_tcp else SCOPE_ABSTRACT_UNIX_SOCKET)
    size = 8 if abi < 4 else 16 if abi < 6 else 24
    try:
        ruleset_fd = _syscall(
            _SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0)
        )
    except OSError as e:
        raise LandlockError(f"cannot create a Landlock ruleset: {e.strerror}") from None
    try:
        _add_path_rule(ruleset_fd, "/", READ & fs, missing_ok=False)
        for path in DEVICES:
            _add_path_rule(ruleset_fd, path, (READ | WRITE_FILE | TRUNCATE) & fs, missing_ok=True)
        for path in [*SCRATCH, *writable]:
            _add_path_rule(ruleset_fd, path, (READ | WRITE) & fs, missing_ok=True)
        for port in connect_ports if not allow_tcp else ():
            rule = _NetPortAttr(allowed_access=NET_CONNECT_TCP, port=port)
            _syscall(_SYS_ADD_RULE, ctypes.c_int(ruleset_fd), ctypes.c_int(_RULE_NET_PORT),
                     ctypes.byref(rule), ctypes.c_uint32(0))  # fmt: skip
        # Required to restrict without CAP_SYS_ADMIN; it also stops setuid binaries from gaining rights.
        _set_no_new_privs()
        _syscall(_SYS_RESTRICT_SELF, ctypes.c_int(ruleset_fd), ctypes.c_uint32(0))
    except OSError as e:
        raise LandlockError(f"cannot apply the Landlock ruleset: {e.strerror}") from None
    finally:
        os.close(ruleset_fd)
    return abi


def _set_no_new_privs() -> None:
    assert _libc is not None
    if _libc.prctl(
        ctypes.c_int(_PR_SET_NO_NEW_PRIVS),
        ctypes.c_ulong(1),
        ctypes.c_ulong(0),
        ctypes.c_ulong(0),
        ctypes.c_ulong(0),
    ):
        err = ctypes.get_errno()
        raise OSError(err, f"prctl(PR_SET_NO_NEW_PRIVS): {os.strerror(err)}")


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def drop_capabilities() -> None:
    """Drop every capability this process holds, also as root (the ambient set too). restrict_self then
    sets no_new_privs, under which exec cannot give them back — not even to uid 0 — nor can setuid files.
    bwrap does the same; this keeps a Landlock-only fallback from leaving root with CAP_SYS_PTRACE (which
    reads openbot's environ), CAP_NET_ADMIN, CAP_SYS_ADMIN (TIOCSTI on any terminal)…"""
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    pr_cap_ambient, pr_cap_ambient_clear_all = 47, 4
    _libc.prctl(pr_cap_ambient, ctypes.c_ulong(pr_cap_ambient_clear_all), 0, 0, 0)  # EINVAL before 4.3
    data = (_CapData * 2)()  # all zero: effective, permitted and inheritable
    if _libc.capset(ctypes.byref(_CapHeader(0x20080522, 0)), data):  # _LINUX_CAPABILITY_VERSION_3
        raise LandlockError(f"cannot drop capabilities: {os.strerror(ctypes.get_errno())}")
