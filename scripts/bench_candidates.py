"""The rule set B's added tasks were drawn by (scripts/bench_sets.py, HISTORY): of `openbot eval
--from-history 200` in each library, every task whose fix is one source file of at most 8 changed lines,
with whether its check passes at the commit and fails with the fix taken back, on this machine's Python.

    python scripts/bench_candidates.py   # a line per task: library sha lines file passes-after fails-before
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

sys.path[:0] = [str(Path(__file__).parent), str(Path(__file__).parent.parent)]
from bench_sets import LIBRARIES, clone  # noqa: E402

from openbot.run.eval.history import history_tasks  # noqa: E402
from openbot.run.eval.suite import Limits  # noqa: E402

MAX_LINES = 8


def git(*args: str, cwd: Path | str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True).stdout


def passes(check: str, cwd: str) -> bool:
    return subprocess.run(check, shell=True, cwd=cwd, capture_output=True, timeout=120).returncode == 0


def main() -> None:
    for library in sys.argv[1:] or LIBRARIES:
        root = clone(library)
        for t in history_tasks(root, 200, LIBRARIES[library][2], Limits()):
            sha = t.base
            numstat = git("diff", "--numstat", f"{sha}^", sha, "--", *t.revert, cwd=root)
            rows = [r.split("\t") for r in numstat.split("\n") if r]
            source = [r for r in rows if r[2].endswith(".py")]
            if len(source) != 1 or source[0][0] == "-" or int(source[0][0]) + int(source[0][1]) > MAX_LINES:
                continue
            with tempfile.TemporaryDirectory() as d:
                git("clone", "-q", str(root), d, cwd="/")
                git("checkout", "-q", sha, cwd=d)
                after = passes(t.check, d)
                git("checkout", "-q", f"{sha}^", "--", *t.revert, cwd=d)
                before = not passes(t.check, d)
            lines = int(source[0][0]) + int(source[0][1])
            print(library, sha[:10], lines, source[0][2], after, before, t.name[11:60], flush=True)


if __name__ == "__main__":
    main()
