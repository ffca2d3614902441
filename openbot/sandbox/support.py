"""What this machine can enforce: Landlock (the inner wall) and bubblewrap namespaces (the outer wall)."""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass

# Test hook, documented in docs/SANDBOX.md: a comma-separated list of what to pretend is missing.
# "1" (or "landlock") no Landlock, "network" no Landlock TCP rules (ABI 3), "bwrap" no namespaces,
# "all" nothing at all.
FORCE_UNAVAILABLE_ENV = "OPENBOT_SANDBOX_FORCE_UNAVAILABLE"


@dataclass(frozen=True)
class KernelSupport:
    landlock_abi: int  # 0 = no Landlock
    filesystem: bool
    network: bool  # Landlock TCP bind/connect rules, ABI >= 4
    detail: str  # one line for `openbot doctor` about Landlock
    bwrap: str = ""  # path of a bwrap that works here, "" when namespaces are unavailable
    bwrap_detail: str = ""  # one line for `openbot doctor` about bubblewrap: what works or what is missing


def _forced() -> set[str]:
    words = {w.strip() for w in os.environ.get(FORCE_UNAVAILABLE_ENV, "").lower().split(",")}
    if words & {"1", "true", "landlock"}:
        words.add("landlock")
    if "all" in words:
        words |= {"landlock", "bwrap"}
    return words - {""}


@functools.lru_cache(maxsize=8)
def _probe_landlock(forced: frozenset[str]) -> tuple[int, str]:
    if "landlock" in forced:
        return 0, f"Landlock is not available: forced unavailable by {FORCE_UNAVAILABLE_ENV}"
    from openbot.sandbox import landlock

    abi, why = landlock.abi_version()
    if "network" in forced:
        abi = min(abi, 3)
    if abi == 0:
        return 0, f"Landlock is not available: {why}"
    if abi < 4:
        return abi, f"Landlock ABI {abi}: filesystem rules only (blocking TCP needs ABI 4, Linux >= 6.7)"
    return abi, f"Landlock ABI {abi}: filesystem and TCP rules enforced"


def kernel_support() -> KernelSupport:
    """What this machine can enforce; cheap after the first call and never raises."""
    from openbot.sandbox import namespaces

    forced = frozenset(_forced())
    try:
        abi, detail = _probe_landlock(forced)
    except Exception as e:  # a probe must not take `openbot doctor` down with it
        abi, detail = 0, f"Landlock is not available: probing failed: {e}"
    try:
        bwrap, bwrap_detail = namespaces.probe("bwrap" in forced)
    except Exception as e:
        bwrap, bwrap_detail = "", f"bubblewrap probe failed: {e}"
    return KernelSupport(abi, abi > 0, abi >= 4, detail, bwrap, bwrap_detail)
