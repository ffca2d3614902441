"""Escape tests run openbot for real, as root and as an ordinary user (`nobody`, via setpriv, when the
tests run as root), on a repository and OPENBOT_HOME that user owns."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from openbot.sandbox import SandboxPolicy, kernel_support, policy_for_run
from tests.helpers import git, make_repo

NOBODY = 65534
SETPRIV = ["setpriv", "--reuid", str(NOBODY), "--regid", str(NOBODY), "--clear-groups"]


def _bwrap_works() -> str:
    """Why bubblewrap cannot run here ("" when it can), probed without openbot's code."""
    exe = shutil.which("bwrap")
    if exe is None:
        return "bubblewrap is not installed (apt-get install bubblewrap)"
    argv = [exe, "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--unshare-all", "true"]
    for prefix in ([], SETPRIV) if os.geteuid() == 0 and shutil.which("setpriv") else ([],):
        out = subprocess.run([*prefix, *argv], capture_output=True, text=True)
        if out.returncode != 0:
            return f"bwrap cannot create namespaces here: {out.stderr.strip()}"
    return ""


BWRAP_MISSING = _bwrap_works()


def _python_for(prefix: list[str]) -> tuple[str, dict[str, str]]:
    """An interpreter the user can run, and the PYTHONPATH that finds openbot and its dependencies.

    A venv's python may link to an interpreter under /root (pyenv), which nobody cannot execute; the
    same version installed system-wide runs the same site-packages."""
    import openbot

    path = os.pathsep.join(
        [str(Path(openbot.__file__).parents[1]), *(p for p in sys.path if p.endswith("site-packages"))]
    )
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for exe in (
        sys.executable,
        os.path.realpath(sys.executable),
        f"/usr/bin/{version}",
        f"/usr/local/bin/{version}",
    ):
        probe = subprocess.run([*prefix, "sh", "-c", '"$0" -I -S -c ""', exe], capture_output=True)
        if probe.returncode == 0:
            return exe, {"PYTHONPATH": path} if prefix else {}
    return "", {}


needs_bwrap = pytest.mark.skipif(bool(BWRAP_MISSING), reason=BWRAP_MISSING)


@dataclass
class User:
    """Who runs openbot, and the repository and OPENBOT_HOME it owns."""

    name: str  # "root" or "nobody" (or "user": the tests run as an ordinary user already)
    prefix: list[str]
    python: str
    python_env: dict[str, str]
    base: Path
    repo: Path
    openbot_home: Path

    def own(self) -> None:
        """Hand everything the test created under base to the user (make_bot writes as root)."""
        if self.name != "nobody":
            return
        for root, dirs, files in os.walk(self.base):
            for name in [*dirs, *files]:
                os.lchown(os.path.join(root, name), NOBODY, NOBODY)
        os.chown(self.base, NOBODY, NOBODY)

    def argv(self, *args: str) -> list[str]:
        return [*self.prefix, self.python, "-m", "openbot", *args]

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        return {
            **os.environ,
            "OPENBOT_HOME": str(self.openbot_home),
            "HOME": str(self.base),
            **self.python_env,
            **(extra or {}),
        }

    def run(self, *args: str, env: dict[str, str] | None = None, timeout: float = 120) -> Any:
        self.own()
        return subprocess.run(
            self.argv(*args), cwd=self.repo, env=self.env(env), capture_output=True, text=True,
            timeout=timeout, stdin=subprocess.DEVNULL,
        )  # fmt: skip

    def start(
        self, *args: str, env: dict[str, str] | None = None, ctty: bool = False, **popen: Any
    ) -> subprocess.Popen[str]:
        """openbot in the background; `ctty`: in a session of its own whose controlling terminal is its
        stdin (setsid -c), as in a login shell."""
        self.own()
        argv = self.argv(*args)
        if ctty:
            argv = [*self.prefix, "setsid", "-w", "-c", *argv[len(self.prefix) :]]
        options: dict[str, Any] = {
            "stdout": subprocess.PIPE,
            "stderr": subprocess.PIPE,
            "stdin": subprocess.DEVNULL,
        }
        return subprocess.Popen(argv, cwd=self.repo, env=self.env(env), text=True, **{**options, **popen})


def _users() -> list[Any]:
    if os.geteuid() != 0:
        return [pytest.param("user", id="user")]
    reason = "" if shutil.which("setpriv") else "setpriv (util-linux) is missing: cannot drop to nobody"
    return ["root", pytest.param("nobody", marks=pytest.mark.skipif(bool(reason), reason=reason))]


@pytest.fixture(params=_users())
def user(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[User]:
    # Not under tmp_path: pytest makes its root 0700, which nobody cannot enter.
    base = Path(tempfile.mkdtemp(prefix="openbot-escape-"))
    base.chmod(0o755)
    prefix = SETPRIV if request.param == "nobody" else []
    python, python_env = _python_for(prefix)
    if not python:
        pytest.skip(
            f"no Python {sys.version_info.major}.{sys.version_info.minor} that {request.param} can run"
        )
    home = base / "openbot-home"
    monkeypatch.setenv("OPENBOT_HOME", str(home))  # make_bot, sessions() and events() look here
    found = User(request.param, prefix, python, python_env, base, make_repo(base / "repo"), home)
    try:
        yield found
    finally:
        shutil.rmtree(base, ignore_errors=True)


# The layout the policy-level tests (test_sandbox.py, test_fallback.py) confine commands in.
needs_landlock = pytest.mark.skipif(
    kernel_support().landlock_abi == 0 or not kernel_support().bwrap,
    reason=f"cannot enforce both walls: {kernel_support().detail}; {kernel_support().bwrap_detail}",
)
needs_landlock_net = pytest.mark.skipif(
    not kernel_support().network, reason=f"kernel has no Landlock TCP rules: {kernel_support().detail}"
)


@dataclass
class Run:
    """One bot run's layout: the user's checkout, the bot's linked worktree, a fake HOME and OPENBOT_HOME."""

    repo: Path
    worktree: Path
    common: Path
    home: Path
    openbot_home: Path
    skills: Path
    tmp: Path

    def policy(self, mode: str, network: bool = False, fallback: str = "error") -> SandboxPolicy:
        return policy_for_run(
            mode,
            worktree=self.worktree,
            common_dir=self.common,
            worktree_admin_dir=self.common / "worktrees" / "t",
            tmp_dir=self.tmp,
            skills_dir=self.skills,
            network=network,
            fallback=fallback,
        )

    def sh(
        self, policy: SandboxPolicy, cmd: str, cwd: Path | None = None
    ) -> subprocess.CompletedProcess[str]:
        env = {
            "PATH": os.environ["PATH"],
            "HOME": str(self.home),
            "OPENBOT_HOME": str(self.openbot_home),
            **{k: v for k, v in os.environ.items() if k.startswith(("GIT_AUTHOR", "GIT_COMMITTER"))},
            **policy.env(),
        }
        return subprocess.run(
            policy.wrap(["bash", "-c", cmd]),
            env=env,
            cwd=cwd or self.worktree,
            capture_output=True,
            text=True,
            timeout=30,
        )

    def sha(self, ref: str) -> str:
        return git(self.repo, "rev-parse", ref)


@pytest.fixture
def run(tmp_path: Path, openbot_home: Path) -> Run:
    repo = make_repo(tmp_path / "repo")
    git(repo, "branch", "feature")
    # Leave main checked out nowhere, so only the sandbox (not git's checked-out guard) protects it.
    git(repo, "checkout", "-q", "-b", "dev")
    (repo / ".git" / "openbot-worktrees").mkdir()
    worktree = repo / ".git" / "openbot-worktrees" / "t"
    git(repo, "worktree", "add", "-q", "-b", "openbot/t", str(worktree))
    home = tmp_path / "home"
    home.mkdir()
    bot = openbot_home / "bots" / "b"
    bot.mkdir(parents=True)
    (bot / "config.md").write_text("+++\n+++\n")
    return Run(repo, worktree, repo / ".git", home, openbot_home, bot / "skills", tmp_path / "run-tmp")


@pytest.fixture
def listener() -> Iterator[int]:
    """A TCP port on 127.0.0.1 that accepts connections (the kernel completes them from the backlog)."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        yield server.getsockname()[1]


DENIALS = (
    "Permission denied",
    "Read-only file system",
    "Operation not permitted",
    "No such file or directory",
)


def denied(result: subprocess.CompletedProcess[str]) -> bool:
    """Failed as a sandbox fails it: Landlock (EACCES), a read-only bind (EROFS), or a path that is not
    there in the sandbox (a hidden /tmp, the /proc of its own PID namespace)."""
    return result.returncode != 0 and any(d in result.stderr for d in DENIALS)
