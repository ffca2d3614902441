"""What a run does between the model's last word and its exit (issue 36: an end no slower than the peers').

Counted and ordered, never timed: the system calls of openbot's main thread under strace, the modules a
run has imported when it leaves.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import complete, make_bot, reply, shell


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace")
def test_the_waiting_sandbox_is_killed_before_the_session_s_record_is_written(
    tmp_path: Path, repo: Path
) -> None:
    """The sandbox waiting for a next command (the session's sandbox server, or a spare still starting)
    is killed as the session that ends the run ends, before its records are written, so it dies while
    openbot writes them; it was killed, and waited for, after them and after the session's end was
    said, sharing a core with the run's end on a busy machine."""
    make_bot("ender", [reply("", shell("echo hi")), reply("", complete("looked", action="discard"))])
    trace = tmp_path / "strace.log"
    out = subprocess.run(  # the main thread only: the records and the kill are both its work
        ["strace", "-qq", "-s", "200", "-o", str(trace), "-e", "trace=kill,write,rename",
         sys.executable, "-m", "openbot", "run", "ender"],
        cwd=repo, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )  # fmt: skip

    assert out.returncode == 0, out.stderr
    calls = trace.read_text().replace('\\"', '"').splitlines()  # strace escapes the quotes it shows
    [said] = [i for i, c in enumerate(calls) if '"type": "tool_call"' in c and "session_complete" in c]
    after = calls[said:]
    kills = [i for i, c in enumerate(after) if re.match(r"kill\(-\d+, SIGKILL\)", c)]
    records = [i for i, c in enumerate(after) if c.startswith("rename(") and 'metadata.json"' in c]
    ended = [i for i, c in enumerate(after) if '"type": "session_ended"' in c]
    assert kills and records and ended, "\n".join(after)
    assert kills[0] < records[0] < ended[0]


NOTIFY_SEEN = """\
import atexit, sys
out = sys.argv.pop(1)
def note(out=out, open=open, sys=sys):
    with open(out, "w") as f:
        f.write(repr(sorted(m for m in ("openbot.run.notify", "urllib.request") if m in sys.modules)))
atexit.register(note)
sys.argv[0] = "openbot"
from openbot.cli.app import main
sys.exit(main())
"""


def test_a_run_without_notify_targets_imports_no_notifier(tmp_path: Path, repo: Path) -> None:
    """The notifier and urllib (~6 ms, more under load) came in at every run's end, targets or none."""
    make_bot("quiet", [reply("", complete("nothing to say", action="discard"))])
    wrapper, seen = tmp_path / "openbot-wrapper.py", tmp_path / "seen.txt"
    wrapper.write_text(NOTIFY_SEEN)
    out = subprocess.run(
        [sys.executable, str(wrapper), str(seen), "run", "quiet"],
        cwd=repo, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )  # fmt: skip

    assert out.returncode == 0, out.stderr
    assert seen.read_text() == "[]"
