"""How late bubblewrap's init arms its parent-death signal, seen from inside the sandbox (docs/SANDBOX.md,
the row on a command outliving a SIGKILLed openbot). openbot no longer has such an init (bwrap runs with
`--as-pid-1` since issue 36); this measures bwrap without it, the case that row describes.

    python scripts/bench_init_arming.py [RUNS] [PREFIX...]
    python scripts/bench_init_arming.py 200 setpriv --reuid 65534 --regid 65534 --clear-groups   # as nobody

Each run starts bwrap with a PID namespace and `--die-with-parent`, and in it a Python that leaves an
orphan and times, from its own start, until pid 1 (bwrap's init) has reaped it — which the init does only
in the wait loop it enters right after arming the signal. A figure above the command's start-up means
the command ran while the init was not yet armed. Run it quiet and under load (e.g. two `yes > /dev/null`)
to see the tail move. `PYTHON=...` names the interpreter run inside (default: /usr/bin's python3).
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys

PROBE = r"""
import os, time
t0 = time.monotonic()
r, w = os.pipe()
middle = os.fork()
if middle == 0:
    try:
        orphan = os.fork()
        if orphan > 0:
            os.write(w, orphan.to_bytes(4, "little"))
    finally:
        os._exit(0)
os.close(w)
os.waitpid(middle, 0)
pid = int.from_bytes(os.read(r, 4), "little")
while True:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        break
    time.sleep(0.0002)
print((time.monotonic() - t0) * 1000)
"""
BWRAP = (
    "bwrap --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --unshare-pid --unshare-ipc --unshare-uts"
    " --unshare-cgroup-try --unshare-net --die-with-parent --new-session --cap-drop ALL --"
).split()


def main() -> int:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    prefix = sys.argv[2:]
    # A system Python: another user (the nobody run) may not reach a virtualenv or a home directory's.
    python = os.environ.get("PYTHON") or shutil.which("python3", path="/usr/bin:/bin") or sys.executable
    times = []
    for _ in range(runs):
        out = subprocess.run(
            [*prefix, *BWRAP, python, "-I", "-S", "-c", PROBE], capture_output=True, text=True, check=True
        )
        times.append(float(out.stdout))
    times.sort()
    n = len(times)
    print(
        f"{n} runs: median {statistics.median(times):.2f} ms, p90 {times[int(n * 0.9)]:.2f},"
        f" p99 {times[min(n - 1, int(n * 0.99))]:.2f}, max {times[-1]:.2f};"
        f" over 5 ms: {sum(t > 5 for t in times)}, over 20 ms: {sum(t > 20 for t in times)}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
