"""The real-model benchmark's task sets (scripts/bench_realmodel.py), each task an `openbot eval` Task.

A: six small tasks written for this benchmark and tuned for no harness (create a file, change a constant,
   fix a NameError, add a function a test needs, an off-by-one, a .gitignore line); one prompt names no file.
B: fixes from real repositories' history, exactly as `openbot eval --from-history` makes them (the commit's
   code taken back, its tests in place, its message as the prompt; the check restores its tests first).
   The repositories are small pure-Python libraries whose tests need only the standard library (unittest):
   cachetools and isodate; more-itertools, tomli and pathspec since 2026-11-28 14:10 UTC.
suite: the project's own 11 tasks (scripts/bench_tasks.py), for comparison with earlier figures.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from openbot.run.eval.history import history_tasks
from openbot.run.eval.suite import Limits, Task

REPOS = Path(os.environ.get("BENCH_TOOLS", "/work/bench-tools")) / "repos"  # as bench_harnesses.TOOLS
# (library, mirror the search tool's fetch gives, the newest commit the clone's HEAD is put at, the check)
LIBRARIES = {
    "cachetools": ("tkem+cachetools", "9a6cb65aae", "/usr/bin/python3 -m unittest {tests}"),
    "isodate": ("gweis+isodate", "89f80896e0", "PYTHONPATH=src /usr/bin/python3 -m unittest {tests}"),
    "more-itertools": ("more-itertools+more-itertools", "2fe1b2eeb9", "/usr/bin/python3 -m unittest {tests}"),
    "tomli": ("hukkin+tomli", "920e20b1cf", "PYTHONPATH=src /usr/bin/python3 -m unittest {tests}"),
    "pathspec": ("cpburnz+python-pathspec", "6568072c27", "/usr/bin/python3 -m unittest {tests}"),
}
# (library, commit): small fixes whose tests run offline on Python 3.11 and fail with the fix taken back
HISTORY = [
    ("cachetools", "462e867950"),  # "Fix #130: Fix pickling/unpickling of cache keys." (keys.py, unnamed)
    ("cachetools", "9a6cb65aae"),  # "Fix #163: Support user_function with cachetools.func decorators."
    ("isodate", "5988e988f5"),  # "Be able to recognize time zones with fractional hours" (unnamed)
    ("isodate", "89f80896e0"),  # "- round down microseconds (in case precision is higher)" (unnamed)
    # added 2026-11-28 by a rule, not by hand: of `--from-history 200` in both libraries, every task whose
    # fix is one source file of at most 8 changed lines and whose check fails with the fix taken back and
    # passes with it on Python 3.11 — 9a6cb65aae and 5988e988f5 (above) and this one
    ("isodate", "ad4e50bd7c"),  # "Adapt after 2to3 removal" (unnamed: isotime.py's `long`)
    # added 2026-11-28 14:10 UTC, by the same rule over three more small unittest libraries (chosen before
    # any harness ran on them), the newest two tasks of each (`bench_candidates.py more-itertools tomli
    # pathspec` lists every one): five of five B tasks were unsolved by every harness, which measured
    # nothing but the model; these widen the set without anyone picking a task by its difficulty
    ("more-itertools", "0e6acdf9b6"),  # "Raise a clear ValueError for negative n in chunked" (unnamed)
    ("more-itertools", "958990e22c"),  # "Raise for negative slice sizes in sliced()" (unnamed)
    ("tomli", "4e245a4bbb"),  # "`tomli.loads`: Raise TypeError not AttributeError" (unnamed)
    ("tomli", "8b962e1349"),  # "Raise a friendly `TypeError` for wrong file mode" (unnamed)
    ("pathspec", "4edba25489"),  # "Add test cases for duplicate leading double-asterisk" (unnamed)
    ("pathspec", "8bf0b6b11f"),  # "Improved byte strings" (unnamed)
]


@dataclass(frozen=True)
class Item:
    set: str
    task: Task
    solve: str = ""  # set A: a reference fix (shell) the self-test applies; B: the original commit is it
    test_cmd: str = ""  # the repository's own test, given to aider as --test-cmd (its documented use)
    library: str = ""  # set B: the clone `openbot eval --from-history` runs in
    sha: str = ""


TEST_TEXT = (
    "from textutil import slugify\n\n"
    'assert slugify("Hello World") == "hello-world"\n'
    'assert slugify("Open Bot Rocks") == "open-bot-rocks"\n'
    'print("ok")\n'
)
SET_A = [
    (
        "new-authors-file",
        {"README.md": "# notes\n\nA small notes app.\n"},
        "Create a file named AUTHORS whose only line is: Ada Lovelace",
        'test "$(grep -c . AUTHORS)" = 1 && grep -qx "[[:space:]]*Ada Lovelace[[:space:]]*" AUTHORS',
        "echo 'Ada Lovelace' > AUTHORS",
        "",
    ),
    (
        "raise-retries",
        {"settings.py": 'HOST = "localhost"\nPORT = 8000\nMAX_RETRIES = 3\nDEBUG = False\n'},
        "In settings.py, raise MAX_RETRIES from 3 to 5.",
        "python3 -c 'import settings as s; assert s.MAX_RETRIES == 5 and s.PORT == 8000' && "
        "grep -q '^HOST = .localhost.$' settings.py",
        "sed -i 's/MAX_RETRIES = 3/MAX_RETRIES = 5/' settings.py",
        "",
    ),
    (
        "fix-nameerror",
        {
            "shop.py": "def total_price(prices, tax_rate):\n    subtotal = sum(prices)\n"
            "    return round(subtotl * (1 + tax_rate), 2)\n",
            "README.md": "# shop\n",
        },
        "Calling total_price in shop.py raises a NameError. Fix the bug.",
        "python3 -c 'from shop import total_price; assert total_price([10, 5], 0.2) == 18.0'",
        "sed -i 's/subtotl/subtotal/' shop.py",
        "",
    ),
    (
        "add-slugify",
        {"textutil.py": 'def shout(text):\n    return text.upper() + "!"\n', "test_textutil.py": TEST_TEXT},
        "python3 test_textutil.py fails: textutil.py has no slugify function. Add slugify(text) to "
        "textutil.py: it lowercases the text and joins its words with hyphens.",
        f"printf %b {TEST_TEXT!r} > test_textutil.py && python3 test_textutil.py && "
        'python3 -c \'from textutil import shout; assert shout("hi") == "HI!"\'',
        "printf 'def slugify(text):\\n    return \"-\".join(text.lower().split())\\n' >> textutil.py",
        "python3 test_textutil.py",
    ),
    (
        "countdown-off-by-one",  # the prompt names no file
        {
            "timer.py": 'def countdown(n):\n    """The numbers from n down to 1."""\n'
            "    return list(range(n, 1, -1))\n",
            "app.py": "from timer import countdown\n\nfor i in countdown(3):\n    print(i)\n",
            "README.md": "# timer\n\nCounts down.\n",
        },
        "countdown(3) should return [3, 2, 1] but the last number is missing. Fix this off-by-one bug.",
        "python3 -c 'from timer import countdown; assert countdown(3) == [3, 2, 1] and countdown(1) == [1]'",
        "sed -i 's/range(n, 1, -1)/range(n, 0, -1)/' timer.py",
        "",
    ),
    (
        "gitignore-build",
        {".gitignore": "__pycache__/\n*.pyc\n", "main.py": 'print("build me")\n'},
        "Make git ignore the build/ directory by adding a line to .gitignore.",
        "mkdir -p build && touch build/out.bin && git check-ignore -q build/out.bin && "
        "grep -qx '__pycache__/' .gitignore && ! git check-ignore -q main.py",
        "echo 'build/' >> .gitignore",
        "",
    ),
]


def set_a(limits: Limits) -> list[Item]:
    return [
        Item("A", Task(name, prompt, check, limits, files=files), solve, test)
        for name, files, prompt, check, solve, test in SET_A
    ]


def set_b(limits: Limits) -> list[Item]:
    """The history tasks, made by the same function `openbot eval --from-history` uses."""
    items = []
    for library, sha in HISTORY:
        root = clone(library)
        check = LIBRARIES[library][2]
        found = [t for t in history_tasks(root, 200, check, limits) if t.base.startswith(sha)]
        if not found:
            raise SystemExit(f"bench: {library} {sha} is not a history task of {root}")
        t = found[0]
        items.append(Item("B", t, test_cmd=t.check, library=library, sha=sha))
    return items


def clone(library: str) -> Path:
    """The library's clone with HEAD at its newest chosen commit (made once from the fetched mirror)."""
    mirror, head, _ = LIBRARIES[library]
    root = REPOS / library
    if not root.is_dir():
        source = Path("/work/.mirror") / mirror / "repo"
        subprocess.run(["git", "clone", "-q", str(source), str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "checkout", "-q", "-f", "-B", "bench", head], check=True)
    return root


def suite_set(limits: Limits) -> list[Item]:
    from bench_tasks import TASKS

    return [
        Item("suite", Task(t["name"], t["prompt"], t["check"], limits, files=t["files"]), t["solve"])
        for t in TASKS
    ]
