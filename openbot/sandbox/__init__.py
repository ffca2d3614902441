"""Sandbox modes for the agent's shell commands, enforced by the kernel: bubblewrap namespaces outside,
Linux Landlock inside.

    read-only           read everything; write only the run's temp dir and its private $HOME; no network
    workspace-write     also write the worktree, the git state a commit on the bot's own branch needs,
                        and the bot's skills dir; no network (default). In the user's own checkout
                        (--no-worktree) everything but its git dir: no `.git`, no commits
    danger-full-access  no confinement

`policy_for_run` decides once per run what the machine can enforce (never downgrading silently), and
`SandboxPolicy.wrap` turns each command into `bwrap … -- python launch.py --write=… -- command`: bwrap
gives it namespaces of its own (namespaces.py), the launcher adds Landlock and execs the command. What is
and is not covered: docs/SANDBOX.md.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from openbot.errors import SandboxError
from openbot.gate import Confined
from openbot.paths import make_private_dir
from openbot.sandbox.support import FORCE_UNAVAILABLE_ENV, KernelSupport, kernel_support

__all__ = [
    "FORCE_UNAVAILABLE_ENV",
    "MODES",
    "KernelSupport",
    "SandboxPolicy",
    "kernel_support",
    "policy_for_run",
    "protect_own_environment",
]

MODES = ("workspace-write", "read-only", "danger-full-access")
_LAUNCHER = Path(__file__).resolve().with_name("launch.py")
_FALLBACK_HINT = (
    '`--sandbox danger-full-access` runs unconfined; `sandbox_fallback = "warn"` runs with what this '
    "machine can enforce, with a warning (`openbot doctor` says what is missing)"
)


@dataclass(frozen=True)
class SandboxPolicy:
    """How one run's commands are confined. `mode` is what is enforced, which a warned fallback lowers."""

    mode: str
    writable: tuple[Path, ...]
    network: bool
    tmp_dir: Path | None
    unconfined_warning: str = ""  # set when sandbox_fallback="warn" let it run with less than both walls
    landlock: bool = True  # the inner wall: Landlock rules applied by launch.py
    landlock_tcp: bool = True  # Landlock can deny TCP (ABI >= 4)
    bwrap: str = ""  # the outer wall: path of bwrap, "" when commands run without namespaces
    readable: tuple[Path, ...] = ()  # paths bound back read-only when they lie under a hidden dir (/tmp…)
    concealed: tuple[Path, ...] = ()  # directories made empty (bwrap only): verification hides the agent's
    # What openbot runs from (grants.interpreter_paths): never writable, bound read-only over any grant.
    protected: tuple[Path, ...] = ()
    shielded: tuple[Path, ...] = ()  # those of them the mode would have granted (a checkout's `.venv/`)
    proxy: str = ""  # the Unix socket of the proxy to listed hosts (proxy.py), when the network is a list

    @property
    def confined(self) -> bool:
        return self.mode != "danger-full-access"

    @property
    def home_dir(self) -> Path | None:
        """The commands' private, writable $HOME (thrown away with the run's temp dir)."""
        return self.tmp_dir / "home" if self.confined and self.tmp_dir else None

    @classmethod
    def unconfined(cls) -> SandboxPolicy:
        """danger-full-access: what a tool given no policy at all runs under (a tool tested on its own;
        a run always has its policy). Its `wrap` is the command itself, marked `Confined` all the same."""
        return cls("danger-full-access", (), True, None, landlock=False)

    def may_write(self, path: Path) -> bool:
        """Whether a confined command could write `path` (absolute and resolved): the rule the edit tool,
        which writes from openbot's own unconfined process, applies to itself."""
        if not self.confined:
            return True
        return any(path == w or path.is_relative_to(w) for w in self.writable)

    def wrap(
        self,
        argv: list[str],
        *,
        also_writable: Sequence[Path] = (),
        also_readable: Sequence[Path] = (),
        launcher_options: Sequence[str] = (),
    ) -> Confined:
        """The argv that runs `argv` confined, or `argv` itself when unconfined (the user's choice), marked
        `Confined` either way: the gate (openbot/gate.py) runs a sandboxed step only from such an argv.

        `also_writable` adds existing paths for this command only — e.g. the file its stdout goes to, so
        that `> /dev/stdout` (which reopens the file by path) is not denied; `also_readable` keeps paths
        visible that would otherwise be hidden (the command logs the model is told to read);
        `launcher_options` go to launch.py (`--command-fd=N`: the command comes later, on that fd).
        """
        if not self.confined:
            return Confined(argv)
        command = list(argv)
        if self.landlock:
            writable = [f"--write={p}" for p in (*self.writable, *also_writable)]
            # In a network namespace of its own TCP goes nowhere, so Landlock may lack TCP rules there.
            allow_tcp = self.network or not self.landlock_tcp
            command = [
                *(sys.executable, "-I", "-S", str(_LAUNCHER)),
                *writable,
                *(["--allow-tcp"] if allow_tcp else []),
                *(["--pid-1"] if self.bwrap else []),  # launch.py: is pid 1, checks openbot is there
                *([f"--proxy={self.proxy}"] if self.proxy else []),
                *launcher_options,
                "--",
                *command,
            ]
        if self.bwrap:
            from openbot.sandbox.namespaces import bwrap_argv

            outer = bwrap_argv(
                self.bwrap,
                writable=(*self.writable, *also_writable),
                readable=(*self.readable, *also_readable),
                network=self.network,
                protected=self.protected,
                concealed=self.concealed,
            )
            command = outer + command
        return Confined(command)

    def env(self) -> dict[str, str]:
        """Variables the command's environment needs on top of the caller's."""
        env = {"TMPDIR": str(self.tmp_dir)} if self.tmp_dir else {}
        if self.home_dir is not None:
            make_private_dir(self.home_dir)  # here, not in policy_for_run: plan checks with tmp_dir=/tmp
            # pip, npm, pre-commit and git want a writable home for caches and config; the user's own
            # (~/.ssh, ~/.aws, shell rc files) stays out of reach for writing.
            env |= {"HOME": str(self.home_dir), "XDG_CACHE_HOME": str(self.home_dir / ".cache")}
        if self.mode == "workspace-write":
            # `git gc --auto` after a commit would rewrite packed-refs and other shared files the sandbox
            # denies; leave housekeeping to the user's own git.
            env |= {
                "GIT_CONFIG_COUNT": "2",
                "GIT_CONFIG_KEY_0": "gc.auto",
                "GIT_CONFIG_VALUE_0": "0",
                "GIT_CONFIG_KEY_1": "maintenance.auto",
                "GIT_CONFIG_VALUE_1": "false",
            }
        if self.proxy:
            from openbot.sandbox.forward import PORT

            # No NO_PROXY: even `localhost` goes through the proxy, which decides (the relay is all
            # there is on the sandbox's loopback).
            url = f"http://127.0.0.1:{PORT}"
            for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
                env[name] = url
            env |= {"no_proxy": "", "NO_PROXY": "", "PIP_PROXY": url, "npm_config_proxy": url}
            env["npm_config_https_proxy"] = url
        return env

    def through(self, proxy: Path) -> SandboxPolicy:
        """This policy with its network a list of hosts: no network of its own, only `proxy` (a Unix
        socket of proxy.py), reached through the relay launch.py starts (both walls needed)."""
        from dataclasses import replace

        if not self.confined:
            return self  # unconfined: the user's choice, the machine's network
        if not (self.bwrap and self.landlock and self.landlock_tcp):
            raise SandboxError(
                "a network list needs both walls (bubblewrap and Landlock with TCP rules), which this"
                " machine lacks",
                hint="use network = false (or true), or see `openbot doctor`",
            )
        return replace(self, network=False, proxy=str(proxy), readable=(*self.readable, proxy.parent))


def policy_for_run(
    mode: str,
    *,
    worktree: Path | None,
    common_dir: Path | None,
    worktree_admin_dir: Path | None,
    tmp_dir: Path,
    skills_dir: Path | None,
    network: bool,
    fallback: str = "error",
) -> SandboxPolicy:
    """The policy for one run; SandboxError when the machine cannot enforce `mode` and fallback is "error".

    With `worktree` None (--no-worktree) the run's working directory is the writable tree — minus its git
    dir, see `grants.checkout_paths`. Creates the temp dir, the skills dir and the bot's
    ref directories, because Landlock rules and bind mounts need existing paths.
    """
    from openbot.sandbox import grants

    if mode not in MODES:
        raise SandboxError(f"unknown sandbox mode {mode!r}", hint=f"use one of: {', '.join(MODES)}")
    make_private_dir(tmp_dir)
    if mode == "danger-full-access":
        return SandboxPolicy(mode, (), True, tmp_dir)
    writable = [tmp_dir]
    workdir = (worktree or Path.cwd()).resolve()
    if mode == "workspace-write":
        if grants.is_users_checkout(workdir, common_dir, worktree_admin_dir):
            writable += grants.checkout_paths(workdir)
        else:
            writable += grants.workspace_paths(workdir, common_dir, worktree_admin_dir)
        if skills_dir is not None:
            writable.append(make_private_dir(skills_dir))
    readable = _readable(workdir, common_dir, worktree_admin_dir)
    # openbot's own interpreter and packages stay read-only whatever the mode grants around them: code
    # planted there would run in openbot's next start, beside the walls, with the model key.
    granted, own = [p.resolve() for p in writable], grants.interpreter_paths()
    policy = SandboxPolicy(
        mode,
        tuple(grants.around(granted, own)),
        network,
        tmp_dir,
        readable=tuple(p.resolve() for p in readable if p is not None),
        protected=tuple(own),
        shielded=tuple(p for p in own if any(p.is_relative_to(w) for w in granted)),
    )
    policy = _fit_to_kernel(policy, kernel_support(), fallback)
    if policy.confined:
        protect_own_environment()
    return policy


def _readable(workdir: Path, common_dir: Path | None, worktree_admin_dir: Path | None) -> list[Path | None]:
    from openbot import paths
    from openbot.sandbox import grants

    readable = [workdir, common_dir, worktree_admin_dir, paths.home(), _LAUNCHER.parent]
    borrowed = grants.alternates([common_dir, worktree_admin_dir])
    # The user's checkout behind borrowed objects (an editable install may point into it), and the
    # user's PATH and virtualenv: what the commands run stays visible when it lies under a hidden /tmp.
    readable += borrowed + [o.parent.parent for o in borrowed if o.parent.name == ".git"]
    readable += [Path(p) for p in os.environ.get("PATH", "").split(os.pathsep) if os.path.isabs(p)]
    readable += [Path(os.environ["VIRTUAL_ENV"])] if os.path.isabs(os.environ.get("VIRTUAL_ENV", "")) else []
    readable += [Path(sys.prefix), Path(sys.base_prefix)]  # the launcher's interpreter
    readable += [Path(__file__).resolve().parent.parent]  # openbot itself (MCP test servers import it)
    return readable


def _fit_to_kernel(policy: SandboxPolicy, support: KernelSupport, fallback: str) -> SandboxPolicy:
    """Both walls when the machine has them; otherwise refuse, or (fallback "warn") run with what there is."""
    from dataclasses import replace

    missing = [] if support.bwrap else [support.bwrap_detail]
    missing += [] if support.filesystem else [support.detail]
    tcp_open = not policy.network and not support.network and not support.bwrap
    if tcp_open and support.filesystem:
        missing.append(f"{support.detail}; without namespaces it cannot block TCP")
    if not missing:
        return replace(policy, bwrap=support.bwrap, landlock_tcp=support.network)
    cause = f"sandbox {policy.mode!r} cannot be enforced: " + "; ".join(missing)
    if fallback != "warn":
        hint = _FALLBACK_HINT + ("; `network = true` allows TCP" if tcp_open and support.filesystem else "")
        raise SandboxError(cause, hint=hint)
    if not support.filesystem and not support.bwrap:
        warning = f'{cause}; commands run UNCONFINED (sandbox_fallback = "warn")'
        return SandboxPolicy("danger-full-access", (), True, policy.tmp_dir, warning)
    if support.bwrap:
        warning = f'{cause}; commands run in namespaces without Landlock (sandbox_fallback = "warn")'
        return replace(policy, unconfined_warning=warning, landlock=False, bwrap=support.bwrap)
    lost = "terminal, processes, UDP, Unix sockets and MPTCP are NOT contained"
    if tcp_open:
        lost = "TCP is NOT blocked, " + lost
    warning = f'{cause}; files are confined by Landlock only: {lost} (sandbox_fallback = "warn")'
    return replace(
        policy, unconfined_warning=warning, network=policy.network or tcp_open, landlock_tcp=support.network
    )


def protect_own_environment() -> None:
    """Make openbot's own process non-dumpable: its /proc/<pid>/environ (the model key), fds and memory
    can then be read only with CAP_SYS_PTRACE, which no confined command has (the launcher and bwrap drop
    every capability, also as root). Commands are exec'd, which makes them dumpable again."""
    import ctypes

    pr_set_dumpable = 4
    try:
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_dumpable, 0, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: no /proc/<pid>/environ to protect
        pass
