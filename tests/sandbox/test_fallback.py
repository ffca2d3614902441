"""When a wall is missing: refused by default, or (sandbox_fallback = "warn") run with the other wall,
saying so; with neither, unconfined and loud."""

from __future__ import annotations

import pytest

from openbot.errors import SandboxError
from openbot.sandbox import FORCE_UNAVAILABLE_ENV, kernel_support
from tests.sandbox.conftest import Run, denied, needs_bwrap

# These force bubblewrap off themselves: Landlock is all they need.
needs_landlock = pytest.mark.skipif(kernel_support().landlock_abi == 0, reason=kernel_support().detail)


def test_unavailable_kernel_is_refused_or_loudly_downgraded(
    run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(FORCE_UNAVAILABLE_ENV, "all")
    support = kernel_support()
    assert support.landlock_abi == 0 and "Landlock is not available" in support.detail and not support.bwrap
    with pytest.raises(SandboxError) as refused:
        run.policy("workspace-write")
    assert refused.value.exit_code == 2
    assert "Landlock is not available" in refused.value.message and "bubblewrap" in refused.value.message
    assert "--sandbox danger-full-access" in refused.value.hint and "sandbox_fallback" in refused.value.hint

    warned = run.policy("read-only", fallback="warn")
    assert (
        "UNCONFINED" in warned.unconfined_warning and "Landlock is not available" in warned.unconfined_warning
    )
    assert warned.wrap(["true"]) == ["true"]
    assert run.policy("danger-full-access").unconfined_warning == ""


@needs_bwrap
def test_without_landlock_the_namespaces_still_confine_on_warn(
    run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(FORCE_UNAVAILABLE_ENV, "1")
    with pytest.raises(SandboxError, match="Landlock is not available"):
        run.policy("workspace-write")
    warned = run.policy("workspace-write", fallback="warn")
    assert warned.mode == "workspace-write" and "without Landlock" in warned.unconfined_warning
    assert "launch.py" not in " ".join(warned.wrap(["true"]))
    assert denied(run.sh(warned, f"touch {run.home}/x")) and denied(run.sh(warned, f"touch {run.repo}/x"))
    assert run.sh(warned, "echo x > new.txt && git add -A && git commit -qm x").returncode == 0


@needs_landlock
def test_without_namespaces_landlock_still_confines_on_warn(
    run: Run, listener: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(FORCE_UNAVAILABLE_ENV, "bwrap")
    with pytest.raises(SandboxError, match="bubblewrap") as refused:
        run.policy("workspace-write")
    assert "bubblewrap" in refused.value.message
    warned = run.policy("workspace-write", fallback="warn")
    assert "Landlock only" in warned.unconfined_warning and "NOT contained" in warned.unconfined_warning
    assert not warned.wrap(["true"])[0].endswith("bwrap")
    assert denied(run.sh(warned, f"touch {run.home}/x"))
    if kernel_support().network:
        assert denied(run.sh(warned, f"exec 3<>/dev/tcp/127.0.0.1/{listener}"))
    caps = run.sh(warned, "grep -E '^Cap(Eff|Prm)' /proc/self/status")
    assert caps.stdout.split() == ["CapPrm:", "0000000000000000", "CapEff:", "0000000000000000"]


@needs_landlock
def test_kernel_without_tcp_rules_keeps_files_confined_on_warn(
    run: Run, listener: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without namespaces (where TCP goes nowhere anyway), Landlock ABI < 4 cannot block TCP."""
    monkeypatch.setenv(FORCE_UNAVAILABLE_ENV, "network,bwrap")
    with pytest.raises(SandboxError, match="cannot block TCP") as refused:
        run.policy("workspace-write")
    assert "network = true" in refused.value.hint

    warned = run.policy("workspace-write", fallback="warn")
    assert warned.network and "TCP is NOT blocked" in warned.unconfined_warning
    assert denied(run.sh(warned, f"touch {run.home}/x"))
    assert run.sh(warned, f"exec 3<>/dev/tcp/127.0.0.1/{listener}").returncode == 0


@needs_bwrap
def test_namespaces_block_tcp_where_landlock_cannot(
    run: Run, listener: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(FORCE_UNAVAILABLE_ENV, "network")
    policy = run.policy("workspace-write")
    assert policy.unconfined_warning == "" and "--allow-tcp" in policy.wrap(["true"])
    result = run.sh(policy, f"exec 3<>/dev/tcp/127.0.0.1/{listener}")
    assert result.returncode != 0 and "Connection refused" in result.stderr
