"""Sandbox modes for the agent's shell commands, enforced by the kernel (Linux Landlock).

    read-only           read everything; write only the run's temp dir and harmless devices; no TCP
    workspace-write     also write the worktree, the git state a commit on the bot's own branch needs,
                        and the bot's skills dir; no TCP (default). In the user's own checkout
                        (--no-worktree) everything but its git dir: no `.git`, no commits
    danger-full-access  no confinement

`policy_for_run` decides once per run what the kernel can enforce (never downgrading silently), and
`SandboxPolicy.wrap` turns each command into `python launch.py --write=… -- command`, which confines
itself and execs the command. What is and is not covered: docs/SANDBOX.md.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from openbot.errors import SandboxError
from openbot.paths import make_private_dir

MODES = ("workspace-write", "read-only", "danger-full-access")
# Test hook, documented in docs/SANDBOX.md: "1" pretends the kernel has no Landlock, "network" pretends
# it has no network rules (ABI 3).
FORCE_UNAVAILABLE_ENV = "OPENBOT_SANDBOX_FORCE_UNAVAILABLE"
_LAUNCHER = Path(__file__).resolve().with_name("launch.py")
_FALLBACK_HINT = (
    '`--sandbox danger-full-access` runs unconfined; `sandbox_fallback = "warn"` does so with a warning'
)


@dataclass(frozen=True)
class KernelSupport:
    landlock_abi: int  # 0 = no Landlock
    filesystem: bool
    network: bool  # TCP bind/connect rules, ABI >= 4
    detail: str  # one line for `openbot doctor`


@functools.lru_cache(maxsize=4)
def _probe(forced: str) -> KernelSupport:
    if forced in ("1", "all", "true"):
        abi, why = 0, f"forced unavailable by {FORCE_UNAVAILABLE_ENV}={forced}"
    else:
        from openbot.sandbox import landlock

        abi, why = landlock.abi_version()
        if forced == "network":
            abi = min(abi, 3)
    if abi == 0:
        return KernelSupport(0, False, False, f"Landlock is not available: {why}")
    if abi < 4:
        detail = f"Landlock ABI {abi}: filesystem rules only (blocking TCP needs ABI 4, Linux >= 6.7)"
        return KernelSupport(abi, True, False, detail)
    return KernelSupport(abi, True, True, f"Landlock ABI {abi}: filesystem and TCP rules enforced")


def kernel_support() -> KernelSupport:
    """What this kernel can enforce; cheap after the first call and never raises."""
    try:
        return _probe(os.environ.get(FORCE_UNAVAILABLE_ENV, "").strip().lower())
    except Exception as e:  # a probe must not take `openbot doctor` down with it
        return KernelSupport(0, False, False, f"Landlock is not available: probing failed: {e}")


@dataclass(frozen=True)
class SandboxPolicy:
    """How one run's commands are confined. `mode` is what is enforced, which a warned fallback lowers."""

    mode: str
    writable: tuple[Path, ...]
    network: bool
    tmp_dir: Path | None
    unconfined_warning: str = ""  # set when sandbox_fallback="warn" downgraded it

    @property
    def confined(self) -> bool:
        return self.mode != "danger-full-access"

    def may_write(self, path: Path) -> bool:
        """Whether a confined command could write `path` (absolute and resolved): the rule the edit tool,
        which writes from openbot's own unconfined process, applies to itself."""
        if not self.confined:
            return True
        return any(path == w or path.is_relative_to(w) for w in self.writable)

    def wrap(self, argv: list[str], *, also_writable: Sequence[Path] = ()) -> list[str]:
        """The argv that runs `argv` confined (through the launcher), or `argv` itself when unconfined.

        `also_writable` adds existing paths for this command only — e.g. the file its stdout goes to, so
        that `> /dev/stdout` (which reopens the file by path) is not denied.
        """
        if not self.confined:
            return list(argv)
        options = [f"--write={p}" for p in (*self.writable, *also_writable)] + (
            ["--allow-tcp"] if self.network else []
        )
        return [sys.executable, "-I", "-S", str(_LAUNCHER), *options, "--", *argv]

    def env(self) -> dict[str, str]:
        """Variables the command's environment needs on top of the caller's."""
        env = {"TMPDIR": str(self.tmp_dir)} if self.tmp_dir else {}
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
        return env


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
    """The policy for one run; SandboxError when the kernel cannot enforce `mode` and fallback is "error".

    With `worktree` None (--no-worktree) the run's working directory is the writable tree — minus its git
    dir, see `_checkout_paths`. Creates the temp dir, the skills dir and the bot's ref directories,
    because Landlock rules need existing paths.
    """
    if mode not in MODES:
        raise SandboxError(f"unknown sandbox mode {mode!r}", hint=f"use one of: {', '.join(MODES)}")
    make_private_dir(tmp_dir)
    if mode == "danger-full-access":
        return SandboxPolicy(mode, (), True, tmp_dir)
    writable = [tmp_dir]
    if mode == "workspace-write":
        workdir = (worktree or Path.cwd()).resolve()
        if _is_users_checkout(workdir, common_dir, worktree_admin_dir):
            writable += _checkout_paths(workdir)
        else:
            writable += _workspace_paths(workdir, common_dir, worktree_admin_dir)
        if skills_dir is not None:
            writable.append(make_private_dir(skills_dir))
    policy = SandboxPolicy(mode, tuple(p.resolve() for p in writable), network, tmp_dir)
    return _fit_to_kernel(policy, kernel_support(), fallback)


def _is_users_checkout(workdir: Path, common_dir: Path | None, admin_dir: Path | None) -> bool:
    """A --no-worktree run: the working directory holds the repository's own `.git` (dir, or the `.git`
    file of the user's linked worktree), which git trusts for config and hooks outside any sandbox."""
    if common_dir is not None and common_dir.resolve().is_relative_to(workdir):
        return True
    return admin_dir is None and (common_dir is not None or os.path.lexists(workdir / ".git"))


def _checkout_paths(workdir: Path) -> list[Path]:
    """Everything under `workdir` except its `.git` and submodules' `.git` files.

    Landlock cannot make `.git` read-only inside a writable `workdir`, so `workdir` itself is not granted:
    each entry beside `.git` is (a directory recursively, a file on its own). New top-level entries
    cannot be created, and commits are impossible — the user commits.
    """
    protected = {Path(".git")} | {Path(sub) / ".git" for sub in _submodule_paths(workdir)}
    protected |= _config_paths(workdir)
    return _paths_around(workdir, workdir, protected)


def _config_paths(workdir: Path) -> set[Path]:
    """What in the checkout configures later runs outside the sandbox: `.openbot/` (bots, skills) and an
    in-tree hooks directory (`core.hooksPath`, e.g. `.githooks`, husky's `.husky/_` and `.husky/`)."""
    import subprocess

    found = {Path(".openbot")}
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    try:
        out = subprocess.run(
            ["git", "config", "--get", "core.hooksPath"],
            cwd=workdir,
            env=env,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        out = ""
    hooks = (workdir / Path(out).expanduser()).resolve() if out else None
    if hooks is not None and hooks.is_relative_to(workdir) and hooks != workdir:
        rel = hooks.relative_to(workdir)
        found.add(rel)
        if rel.name == "_" and rel.parent != Path("."):  # husky: `_/` runs the hooks kept beside it
            found.add(rel.parent)
    return found


def _paths_around(root: Path, directory: Path, protected: set[Path]) -> list[Path]:
    granted: list[Path] = []
    for entry in sorted(directory.iterdir()):
        rel = entry.relative_to(root)
        # A symlink would grant its target (Landlock opens the path): the target is either inside the
        # tree and granted on its own, or outside it (or in .git) and not to be granted at all.
        if rel in protected or entry.is_symlink() or not (entry.is_dir() or entry.is_file()):
            continue
        if entry.is_dir() and any(p.is_relative_to(rel) for p in protected):
            granted += _paths_around(root, entry, protected)
        else:
            granted.append(entry)
    return granted


def _submodule_paths(workdir: Path) -> list[str]:
    """Submodule paths from `.gitmodules` (git-config syntax, `path = sub/dir` lines)."""
    try:
        text = (workdir / ".gitmodules").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    paths = []
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() == "path" and value.strip().strip('"'):
            paths.append(value.strip().strip('"').strip("/"))
    return paths


def _workspace_paths(worktree: Path, common_dir: Path | None, admin_dir: Path | None) -> list[Path]:
    paths = [worktree]
    if common_dir is not None:
        # A commit in a linked worktree writes objects, the worktree's own HEAD/index/logs, and the
        # branch's ref and reflog (`<name>.lock` is created next to the ref). Granting refs/heads/openbot/
        # rather than refs/heads/ is what keeps `git branch -f main` out: main.lock cannot be created.
        ref_dirs = [
            common_dir / "refs" / "heads" / "openbot",
            common_dir / "logs" / "refs" / "heads" / "openbot",
        ]
        for d in ref_dirs:
            d.mkdir(parents=True, exist_ok=True)
        paths += [common_dir / "objects", *ref_dirs]
    if admin_dir is not None:
        paths.append(admin_dir)
    return paths


def _fit_to_kernel(policy: SandboxPolicy, support: KernelSupport, fallback: str) -> SandboxPolicy:
    """Lower the policy to what the kernel enforces when fallback is "warn"; otherwise refuse."""
    if not support.filesystem:
        cause = f"sandbox {policy.mode!r} cannot be enforced: {support.detail}"
        if fallback != "warn":
            raise SandboxError(cause, hint=_FALLBACK_HINT)
        warning = f'{cause}; commands run UNCONFINED (sandbox_fallback = "warn")'
        return SandboxPolicy("danger-full-access", (), True, policy.tmp_dir, warning)
    if not policy.network and not support.network:
        cause = f"sandbox {policy.mode!r} cannot block TCP: {support.detail}"
        if fallback != "warn":
            raise SandboxError(cause, hint=f"`network = true` allows TCP; {_FALLBACK_HINT}")
        warning = f'{cause}; TCP is NOT blocked, files are confined (sandbox_fallback = "warn")'
        return SandboxPolicy(policy.mode, policy.writable, True, policy.tmp_dir, warning)
    return policy
