"""The real-model benchmark's tasks: small repositories (recipes), tiny prompts, objective checks.

Graded from what a 1.5B model should manage (create a file, fix a constant, a one-line change) up to a
function to implement, an off-by-one, a CLI flag and a rename across three files. Each check fails on the
untouched repository (`bench_realmodel.py` proves it before any harness runs).
"""

from __future__ import annotations

from typing import TypedDict


class BenchTask(TypedDict):
    name: str
    level: int  # 1 easy … 3 harder
    files: dict[str, str]
    prompt: str
    check: str
    solve: str  # a reference solution (shell), run only by --selftest: the check must pass after it


CLI = """import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--name", default="world")
args = parser.parse_args()
print("hello " + args.name)
"""
UTIL = "def calc_total(items):\n    return sum(items)\n"
MAIN = "from util import calc_total\n\nprint(calc_total([1, 2, 3]))\n"
REPORT = "import util\n\nassert util.calc_total([2, 2]) == 4\nprint('report ok')\n"
NUMBERS = "def is_even(n):\n    return n % 2 == 1\n"
TEST_NUMBERS = "from numbers_ import is_even\n\nassert is_even(4)\nassert not is_even(7)\nprint('ok')\n"
MATHX = "def add(a, b):\n    raise NotImplementedError\n"
TEST_MATHX = "from mathx import add\n\nassert add(2, 3) == 5\nassert add(-1, 1) == 0\nprint('ok')\n"

TASKS: list[BenchTask] = [
    {
        "name": "create-file",
        "level": 1,
        "files": {"README.md": "# demo\n"},
        "prompt": "Create a file hello.txt containing the word hello.",
        "check": 'test "$(tr -d "[:space:]" < hello.txt)" = hello',
        "solve": "echo hello > hello.txt",
    },
    {
        "name": "fix-constant",
        "level": 1,
        "files": {"config.py": "TIMEOUT = 10\n"},
        "prompt": "In config.py, set TIMEOUT to 30.",
        "check": "python3 -c 'import config; assert config.TIMEOUT == 30'",
        "solve": "sed -i 's/10/30/' config.py",
    },
    {
        "name": "one-line-change",
        "level": 1,
        "files": {"app.py": 'print("Hello, world")\n'},
        "prompt": "In app.py, print Goodbye instead of Hello.",
        "check": 'test "$(python3 app.py)" = "Goodbye, world"',
        "solve": "sed -i 's/Hello/Goodbye/' app.py",
    },
    {
        "name": "add-setting",
        "level": 1,
        "files": {"settings.py": 'NAME = "demo"\n'},
        "prompt": "Add the line DEBUG = False to settings.py.",
        "check": "python3 -c 'import settings as s; assert s.DEBUG is False and s.NAME == \"demo\"'",
        "solve": "echo 'DEBUG = False' >> settings.py",
    },
    {
        "name": "create-module",
        "level": 2,
        "files": {"README.md": "# greetings\n"},
        "prompt": "Create greet.py with a function greet(name) that returns 'Hello, ' + name.",
        "check": 'python3 -c \'from greet import greet; assert greet("Ann") == "Hello, Ann"\'',
        "solve": "printf 'def greet(name):\\n    return \"Hello, \" + name\\n' > greet.py",
    },
    {
        "name": "implement-function",
        "level": 2,
        "files": {"mathx.py": MATHX, "test_mathx.py": TEST_MATHX},
        "prompt": "Implement add(a, b) in mathx.py so that python3 test_mathx.py passes.",
        "check": f"printf %b {TEST_MATHX!r} > test_mathx.py && python3 test_mathx.py",
        "solve": "sed -i 's/raise NotImplementedError/return a + b/' mathx.py",
    },
    {
        "name": "fix-bug",
        "level": 2,
        "files": {"numbers_.py": NUMBERS, "test_numbers.py": TEST_NUMBERS},
        "prompt": "is_even in numbers_.py is wrong. Fix it so python3 test_numbers.py passes.",
        "check": f"printf %b {TEST_NUMBERS!r} > test_numbers.py && python3 test_numbers.py",
        "solve": "sed -i 's/== 1/== 0/' numbers_.py",
    },
    {
        "name": "off-by-one",
        "level": 2,
        "files": {"ranges.py": "def total(n):\n    return sum(range(1, n))\n"},
        "prompt": "total(n) in ranges.py must sum 1..n including n. Fix the off-by-one.",
        "check": "python3 -c 'from ranges import total; assert total(3) == 6 and total(1) == 1'",
        "solve": "sed -i 's/n))/n + 1))/' ranges.py",
    },
    {
        "name": "add-docstring",
        "level": 2,
        "files": {"shapes.py": "def area(w, h):\n    return w * h\n"},
        "prompt": "Add a docstring to the function area in shapes.py.",
        "check": "python3 -c 'import shapes; assert shapes.area.__doc__ and shapes.area(2, 3) == 6'",
        "solve": 'sed -i \'s/^def area(w, h):/def area(w, h):\\n    """The area."""/\' shapes.py',
    },
    {
        "name": "add-cli-flag",
        "level": 3,
        "files": {"cli.py": CLI},
        "prompt": "Add a --shout flag to cli.py that prints the greeting in upper case.",
        "check": 'test "$(python3 cli.py --name bob --shout)" = "HELLO BOB" && '
        'test "$(python3 cli.py --name bob)" = "hello bob"',
        "solve": 'sed -i \'s/^args = /parser.add_argument("--shout", action="store_true")\\nargs = /'
        '; s/^print("hello " + args.name)/msg = "hello " + args.name'
        "\\nprint(msg.upper() if args.shout else msg)/' cli.py",
    },
    {
        "name": "rename-function",
        "level": 3,
        "files": {"util.py": UTIL, "main.py": MAIN, "report.py": REPORT},
        "prompt": "Rename the function calc_total to compute_total in util.py, main.py and report.py.",
        "check": "! grep -q calc_total util.py main.py report.py && grep -q 'def compute_total' util.py && "
        "python3 main.py && python3 report.py",
        "solve": "sed -i 's/calc_total/compute_total/g' util.py main.py report.py",
    },
]
