"""openbot reaps every sandbox it starts (issue 36). bwrap's outer process exits before its namespace's
init, which was orphaned to whoever reaps orphans on the machine: its CPU invisible to `wait4` and `time`,
17 such inits a 16-command run. openbot is a subreaper for its run and waits for them.

Counted in processes through /proc, not timed: a harness that is itself a subreaper runs openbot, so an
init openbot does not reap ends up the harness's; while openbot runs, the harness samples how many of
openbot's own children are unreaped (zombie) inits.
"""

from __future__ import annotations

import json

from tests.helpers import complete, make_bot, reply, shell
from tests.sandbox.conftest import User, needs_bwrap

pytestmark = needs_bwrap

HARNESS = r"""
import ctypes, json, os, subprocess, sys, threading
out = sys.argv[1]
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER: what openbot orphans comes here

def children(pid):
    found = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                found += [int(p) for p in f.read().split()]
    except OSError:
        pass
    return found

def stat(pid):  # (state, command name)
    try:
        with open(f"/proc/{pid}/stat") as f:
            text = f.read()
    except OSError:
        return ("gone", "")
    return (text.rsplit(")", 1)[1].split()[0], text.split("(", 1)[1].rsplit(")", 1)[0])

def init(pid):  # pid 1 of a namespace of its own: an init, not the bwrap openbot started (and waits for)
    try:
        with open(f"/proc/{pid}/status") as f:
            return any(len(line.split()) > 2 for line in f if line.startswith("NSpid:"))
    except OSError:
        return False

with open(out + ".err", "w") as err:
    proc = subprocess.Popen([sys.executable, *sys.argv[2:]], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=err)
    most, done = [0], threading.Event()
    def sample():
        while not done.is_set():
            zombies = [c for c in children(proc.pid) if stat(c) == ("Z", "bwrap") and init(c)]
            most[0] = max(most[0], len(zombies))
            done.wait(0.002)
    thread = threading.Thread(target=sample)
    thread.start()
    code = proc.wait()
    done.set()
    thread.join()
left = [(c, *stat(c)) for c in children(os.getpid())]
with open(out, "w") as f:
    json.dump({"code": code, "most_unreaped": most[0], "left": left}, f)
"""


def test_a_16_command_run_reaps_every_sandbox_it_started(user: User) -> None:
    make_bot("reaper", [*(reply("", shell(f"echo {i}")) for i in range(16)), reply("", complete("ok"))])
    harness, out = user.base / "harness.py", user.base / "reaped.json"
    harness.write_text(HARNESS)
    user.own()
    import subprocess

    subprocess.run(
        [*user.prefix, user.python, str(harness), str(out), "-m", "openbot", "run", "reaper"],
        cwd=user.repo, env=user.env(), timeout=300, stdin=subprocess.DEVNULL, check=True,
    )  # fmt: skip

    result = json.loads(out.read_text())
    assert result["code"] == 0, (user.base / "reaped.json.err").read_text()
    # Before: 17 bwrap inits (one per command, one for the spare left at the end) came to the harness.
    inits = [c for c in result["left"] if c[2] == "bwrap"]
    assert inits == [], result["left"]
    # Each command's init is reaped as the command ends (openbot waits for it): never more than the one on
    # its way out is left unreaped.
    assert result["most_unreaped"] <= 1, result
