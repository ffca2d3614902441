"""The README's main command: `scripts/demo.sh` performs a complete offline run."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from openbot import paths

DEMO = paths.PACKAGE_ROOT / "scripts" / "demo.sh"


@pytest.mark.skipif(shutil.which("openbot") is None, reason="the openbot command is not installed on PATH")
def test_the_demo_script_runs_a_whole_offline_run(tmp_path: Path) -> None:
    env = {**os.environ, "OPENBOT_HOME_DEMO": str(tmp_path / "home"), "TMPDIR": str(tmp_path)}
    env.pop("ANTHROPIC_API_KEY", None)
    out = subprocess.run(
        ["bash", str(DEMO)], env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
    )
    text = out.stdout + out.stderr
    assert out.returncode == 0, text
    assert "completed" in text and "demo-greeting:" in text and "openbot/demo-" in text
    assert "HELLO_FROM_OPENBOT.md" in text
    # one directory holds everything it made (the OPENBOT_HOME here is the test's), named at the end
    made = [p for p in tmp_path.iterdir() if p.name != "home"]
    assert len(made) == 1 and made[0].name.startswith("openbot-demo.") and f"rm -rf '{made[0]}'" in text
    assert f"git -C '{made[0] / 'demo-repo'}' log --stat main..openbot/demo-" in text
