"""What a run does between the model's last word and its exit (issue 36: an end no slower than the peers').

Counted and ordered, never timed: the system calls of openbot's main thread under strace, the modules a
run has imported when it leaves.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import complete, make_bot, reply, shell, wait_for


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


LATE_IMPORTS = """\
import atexit, sys, threading
out = sys.argv.pop(1)
late = []
class Spy:
    ended = False
    def find_spec(self, name, path=None, target=None):
        if Spy.ended and threading.current_thread().name not in ("openbot-warm-end", "openbot-pygit2"):
            late.append(name)
        return None
sys.meta_path.insert(0, Spy())
import openbot.run.session as session
close = session.Session.close
def closing(self, error):
    Spy.ended = Spy.ended or error is not None  # the session that ends the run
    return close(self, error)
session.Session.close = closing
def note(out=out, late=late, open=open):
    with open(out, "w") as f:
        f.write(repr(sorted(late)))
atexit.register(note)
sys.argv[0] = "openbot"
from openbot.cli.app import main
sys.exit(main())
"""


@pytest.mark.parametrize("action", ["discard", "review"])
def test_the_end_imports_no_git_module_after_the_model_s_last_word(
    tmp_path: Path, repo: Path, action: str
) -> None:
    """pygit2, the homecoming and the action are imported on a thread while the model works, and the
    end waits for that thread rather than importing any of them itself (on its main thread or the one
    that saves the work) after the last word."""
    work = "echo hi > note.txt && git add note.txt && git commit -qm note && echo x > scratch.txt"
    make_bot("late", [reply("", shell(work)), reply("", complete("noted", action=action))])
    wrapper, seen = tmp_path / "openbot-wrapper.py", tmp_path / "late.txt"
    wrapper.write_text(LATE_IMPORTS)
    out = subprocess.run(
        [sys.executable, str(wrapper), str(seen), "run", "late"],
        cwd=repo, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )  # fmt: skip

    assert out.returncode == 0, out.stderr
    late = eval(seen.read_text())
    assert [m for m in late if m == "pygit2" or m.startswith("openbot.git.")] == []


def test_the_trash_s_rm_runs_at_the_lowest_priority(tmp_path: Path, repo: Path) -> None:
    """The detached rm of the run's trash starts while openbot still writes its records and says how the
    run ended; at nice 19 it takes next to no core from them (or from a neighbour): it ran at openbot's
    own priority. A shim `rm` first on PATH logs its nice value (/proc's field 19) and, where the kernel
    schedules each session as a group (autogroup), its session's: a task's nice counts only inside its
    session, and the rm has a session of its own (it was at the group's default, 0)."""
    log, shim = tmp_path / "rm.log", tmp_path / "bin" / "rm"
    shim.parent.mkdir()
    group = Path("/proc/self/autogroup").exists()
    policy = f"awk '{{print $19}}' /proc/$$/stat >> \"{log}\""
    if group:  # "/autogroup-123 nice 19"
        policy = f'awk \'{{printf "%s ", $3}}\' /proc/$$/autogroup >> "{log}"; {policy}'
    shim.write_text(f'#!/bin/sh\n{policy}\nexec {shutil.which("rm")} "$@"\n')
    shim.chmod(0o755)
    make_bot("tidy", [reply("", shell("echo hi > x.txt")), reply("", complete("done", action="discard"))])
    env = {**os.environ, "PATH": f"{shim.parent}{os.pathsep}{os.environ['PATH']}"}
    out = subprocess.run(
        [sys.executable, "-m", "openbot", "run", "tidy"],
        cwd=repo, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )  # fmt: skip

    assert out.returncode == 0, out.stderr
    wait_for(lambda: log.exists() and log.read_text().endswith("\n"))
    assert log.read_text().split() == (["19", "19"] if group else ["19"])


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace")
def test_the_end_fsyncs_each_record_once(tmp_path: Path, repo: Path) -> None:
    """After the model's last word: the conversation, then metadata.json and run.json once each (the
    file and its directory), durable before exit. The session that ends the run wrote both durably too,
    right before the run's end wrote them again (9 fsyncs, each a wait on a shared disk)."""
    make_bot("synced", [reply("", shell("echo hi > x.txt")), reply("", complete("done", action="discard"))])
    trace = tmp_path / "strace.log"
    out = subprocess.run(  # the main thread only: the records are its work
        ["strace", "-qq", "-s", "200", "-o", str(trace), "-e", "trace=fsync,write,rename",
         sys.executable, "-m", "openbot", "run", "synced"],
        cwd=repo, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )  # fmt: skip

    assert out.returncode == 0, out.stderr
    calls = trace.read_text().replace('\\"', '"').splitlines()
    [said] = [i for i, c in enumerate(calls) if '"type": "tool_call"' in c and "session_complete" in c]
    after = [c for c in calls[said:] if c.startswith(("fsync(", "rename("))]
    renamed = [c.split('"')[3].rsplit("/", 1)[-1] for c in after if c.startswith("rename(")]
    assert renamed[-2:] == ["metadata.json", "run.json"]  # the run's end: the last, durable writes
    assert [c.split("(")[0] for c in after[-6:]] == ["fsync", "rename", "fsync"] * 2
    assert len([c for c in after if c.startswith("fsync(")]) == 5, "\n".join(after)
