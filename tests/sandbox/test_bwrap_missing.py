"""Without a working bubblewrap: `openbot doctor` says what is missing and how to fix it, a run refuses
(exit 2) by default, and sandbox_fallback = "warn" runs Landlock only, saying so loudly."""

from __future__ import annotations

from pathlib import Path

import pytest

from openbot.sandbox import kernel_support, namespaces
from tests.helpers import complete, events, make_bot, metadata, reply, run_cli, sessions, shell

needs_landlock = pytest.mark.skipif(kernel_support().landlock_abi == 0, reason=kernel_support().detail)


@pytest.fixture
def broken_bwrap(tmp_path: Path) -> dict[str, str]:
    """A PATH whose bwrap fails the way it does where user namespaces are disabled."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n")
    fake.chmod(0o755)
    import os

    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


def test_probe_names_the_package_when_bwrap_is_not_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    exe, detail = namespaces.probe.__wrapped__(False)
    assert exe == "" and "apt-get install bubblewrap" in detail and "dnf install bubblewrap" in detail


def test_doctor_says_user_namespaces_are_disabled(repo: Path, broken_bwrap: dict[str, str]) -> None:
    out = run_cli("doctor", cwd=repo, env=broken_bwrap)
    [line] = [x for x in out.stdout.splitlines() if " bubblewrap: " in x]
    assert line.startswith("FAIL") and "uid map: Permission denied" in line
    assert "user namespaces" in line and "apparmor_restrict_unprivileged_userns" in line
    assert out.returncode == 1


@needs_landlock
def test_a_run_refuses_without_namespaces_or_warns_and_runs_landlock_only(
    repo: Path, broken_bwrap: dict[str, str]
) -> None:
    make_bot("refused", [reply("", complete())])
    out = run_cli("run", "refused", cwd=repo, env=broken_bwrap)
    assert out.returncode == 2 and "bubblewrap" in out.stderr and "sandbox_fallback" in out.stderr
    assert "Traceback" not in out.stderr and sessions("refused") == []

    make_bot(
        "warned",
        [reply("", shell("touch ../outside; echo x > inside", "cmd")), reply("", complete())],
        config='sandbox_fallback = "warn"',
    )
    out = run_cli("run", "warned", cwd=repo, env=broken_bwrap)
    assert out.returncode == 0, out.stderr
    assert "WARNING" in out.stderr and "Landlock only" in out.stderr
    meta = metadata(sessions("warned")[0])
    assert meta["sandbox"]["enforced"] == "workspace-write" and "NOT contained" in meta["sandbox"]["warning"]
    [command] = [e for e in events(sessions("warned")[0]) if e["type"] == "command"]
    assert "Permission denied" in command["output"]  # Landlock still holds the files
