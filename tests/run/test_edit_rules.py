"""work_mode "edits": whole files for files that exist (agent/wholefile.py, docs/MODELS.md "In edits
mode") through the real CLI: a file the model has not seen is not replaced whole, a whole file that keeps
none of the old lines is added at its end, and a reply cut at its length limit writes only what closed."""

from __future__ import annotations

from pathlib import Path

from openbot.testing.fakeopenai import FakeOpenAI, last_user_text, reply
from tests.helpers import git, make_bot, make_repo, run_cli
from tests.run.test_edit_mode import EDITS, MODEL, conversation_texts, local_bot, show, text

GITIGNORE = {".gitignore": "__pycache__/\n*.pyc\n", "main.py": "print(1)\n"}


def test_a_whole_file_keeping_none_of_the_old_lines_is_added_at_its_end(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "proj", GITIGNORE)
    only_new = text("Ignore build.\n\n.gitignore\n```\nbuild/\n```\n")
    make_bot("e", [only_new, text("DONE")], EDITS, instructions="Add build/ to .gitignore.")
    out = run_cli("run", "e", cwd=repo)
    assert out.returncode == 0, out.stderr
    assert show(repo, ".gitignore") == "__pycache__/\n*.pyc\nbuild/"
    told = [t for t in conversation_texts("e") if ".gitignore: written (added at its end" in t]
    assert len(told) == 1 and "kept none of its 2 lines" in told[0] and "send it again" in told[0]


def test_the_same_whole_file_sent_again_replaces_the_old_one(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "proj", GITIGNORE)
    only_new = text("Only build.\n\n.gitignore\n```\nbuild/\n```\n")
    make_bot(
        "e", [only_new, only_new, text("DONE")], EDITS, instructions="Make .gitignore ignore only build/."
    )
    out = run_cli("run", "e", cwd=repo)
    assert out.returncode == 0, out.stderr
    assert show(repo, ".gitignore") == "build/"


def test_a_file_the_model_has_not_seen_is_not_replaced_whole_but_shown(tmp_path: Path) -> None:
    big = "".join(f"LINE_{n} = {n}  # a setting, long enough to pad\n" for n in range(100))
    repo = make_repo(tmp_path / "proj", {"settings.py": big, "notes.txt": "word " * 600})
    blind = reply("Set it.\n\nsettings.py\n```python\nLINE_3 = 30\n```\n")
    line = "  # a setting, long enough to pad\n"
    search = reply(
        f"settings.py\n<<<<<<< SEARCH\nLINE_3 = 3{line}=======\nLINE_3 = 30{line}>>>>>>> REPLACE\n"
    )
    with FakeOpenAI([blind, search, reply("DONE")], models={MODEL: {"context_window": 6000}}) as api:
        local_bot(api.base_url, "")
        out = run_cli("run", "small", cwd=repo)
        asked = [last_user_text(b) for b in api.bodies]
    assert out.returncode == 0, out.stderr
    assert show(repo, "settings.py") == big.replace("LINE_3 = 3 ", "LINE_3 = 30 ").rstrip("\n")
    assert "settings.py\n```python\nLINE_0 = 0" not in asked[0]  # too long for the first message
    assert "settings.py: not changed: you have not seen this file" in asked[1]
    assert "LINE_99 = 99" in asked[1] and "<<<<<<< SEARCH" in asked[1]


def test_a_reply_cut_at_its_limit_writes_the_files_that_closed_and_not_the_cut_one(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path / "proj", {"config.py": "X = 1\nY = 2\n", "util.py": "def f():\n    return 1\n"}
    )
    cut = "Both.\n\nconfig.py\n```python\nX = 5\nY = 2\n```\n\nutil.py\n```python\ndef f(\n"
    make_bot("e", [{"text": cut, "stop_reason": "max_tokens"}, text("DONE")], EDITS)
    out = run_cli("run", "e", cwd=repo)
    assert out.returncode == 0, out.stderr
    assert show(repo, "config.py") == "X = 5\nY = 2"
    assert show(repo, "util.py") == "def f():\n    return 1"
    assert any("util.py: not changed: your reply ended before the block closed" in t
               for t in conversation_texts("e"))  # fmt: skip
    assert "Both." in git(repo, "log", "--format=%s", "-3", "--all")


def test_a_failed_check_names_the_error_and_shows_the_line_it_points_at(tmp_path: Path) -> None:
    test = "import unittest\n\nfrom textutil import slugify\n\n\nclass S(unittest.TestCase):\n"
    test += "    def test_slug(self):\n        self.assertEqual(slugify('A b'), 'a-b')\n"
    repo = make_repo(tmp_path / "proj", {"textutil.py": "def title(s):\n    return s.title()\n",
                                         "test_textutil.py": test})  # fmt: skip
    body = (
        "def title(s):\n    return s.title()\n\n\ndef slugify(s):\n    return s.lower().replace(' ', '-')\n"
    )
    circular = text(f"Add slugify.\n\ntextutil.py\n```python\nfrom textutil import slugify\n\n{body}```\n")
    fixed = text(f"Fixed.\n\ntextutil.py\n```python\n{body}```\n")
    make_bot(
        "e", [circular, fixed], EDITS + '\nverify = ["python3 -m unittest"]', "Add slugify to textutil.py."
    )
    out = run_cli("run", "e", cwd=repo)
    assert out.returncode == 0, out.stderr
    [told] = [t for t in conversation_texts("e") if "[openbot] the check `python3 -m unittest` failed" in t]
    error = (
        "The error: `ImportError: cannot import name 'slugify' from partially initialized module 'textutil'"
    )
    assert error in told
    assert (
        "It points at textutil.py line 1:\n```\n>1 | from textutil import slugify\n 2 | \n 3 | def title(s):"
        in told
    )


def test_the_files_a_task_is_about_are_shown_when_it_names_none_and_a_long_one_is_changed_by_function(
    tmp_path: Path,
) -> None:
    helpers = "".join(f"def helper_{k}(value):\n    return value + {k}\n\n" for k in range(40))
    filler = {f"mod{n}.py": helpers for n in range(6)}
    clock = "".join(f"STEP_{k} = {k}\n" for k in range(90)) + (
        "\n\ndef parse_time(text):\n    seconds, fraction = text.split('.')\n"
        "    microseconds = int(fraction[:6].ljust(6, '0'))\n    return int(seconds), microseconds\n"
    )
    repo = make_repo(tmp_path / "proj", {**filler, "clock.py": clock})
    task = "Round down the microseconds when a parsed time has more digits than that."
    with FakeOpenAI(
        [reply("DONE"), reply("DONE"), reply("DONE")], models={MODEL: {"context_window": 8192}}
    ) as api:
        local_bot(api.base_url, "")
        run_cli("run", "small", "--prompt", task, cwd=repo)
        first = last_user_text(api.bodies[0])
    assert "clock.py\n```python\nSTEP_0 = 0\n" in first
    assert "mod0.py\n```" not in first and "mod0.py" in first  # listed, not shown
    assert "clock.py is long: for it, write its path, then only the functions you change, each whole" in first


def test_a_one_line_files_line_replaced_is_a_change_not_offered_as_an_addition(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "proj", {"app.py": 'print("Hello, world")\n'})
    make_bot("e", [text('app.py\n```python\nprint("Goodbye, world")\n```\n'), text("DONE")], EDITS)
    out = run_cli("run", "e", cwd=repo)
    assert out.returncode == 0, out.stderr
    assert show(repo, "app.py") == 'print("Goodbye, world")'
    said = conversation_texts("e")
    assert not any("are gone" in t or "If you meant to add" in t for t in said), said


def test_a_whole_file_that_renames_every_line_replaces_it(tmp_path: Path) -> None:
    main = "from util import calc_total\n\nprint(calc_total([1, 2, 3]))\n"
    repo = make_repo(
        tmp_path / "proj", {"main.py": main, "util.py": "def calc_total(items):\n    return 0\n"}
    )
    renamed = "from util import compute_total\n\nprint(compute_total([1, 2, 3]))\n"
    make_bot("e", [text(f"main.py\n```python\n{renamed}```\n"), text("DONE")], EDITS)
    out = run_cli("run", "e", cwd=repo)
    assert out.returncode == 0, out.stderr
    assert show(repo, "main.py") == renamed.rstrip("\n")


def test_the_file_the_check_fails_in_is_shown_first_in_place_of_the_repo_maps_guess(tmp_path: Path) -> None:
    """isodate ad4e50bd7c ("Adapt after 2to3 removal"): the repo map showed isodates.py (16,000 characters)
    for the task's words; the check's traceback raised in isotime.py, which was not shown."""
    helpers = "".join(f"def helper_{k}(value):\n    return value + {k}\n\n" for k in range(40))
    filler = {f"mod{n}.py": helpers for n in range(6)}
    dates = "".join(f"# adapt this after the 2to3 removal, step {k}\n" for k in range(60)) + "X = 1\n"
    times = "def micro(text):\n    return int(float(text) * long(1e6))\n"
    test = "from times import micro\n\nassert micro('0.5') == 500000\n"
    repo = make_repo(
        tmp_path / "proj", {**filler, "dates.py": dates, "times.py": times, "test_times.py": test}
    )
    with FakeOpenAI([reply("DONE"), reply("DONE")], models={MODEL: {"context_window": 8192}}) as api:
        local_bot(api.base_url, 'verify = ["python3 test_times.py"]')
        run_cli("run", "small", "--prompt", "Adapt after 2to3 removal", cwd=repo)
        first = last_user_text(api.bodies[0])
    assert "NameError: name 'long' is not defined" in first
    assert first.startswith("# Files\ntimes.py\n```python\ndef micro(text):")
    assert "dates.py\n```" not in first and "dates.py" in first  # listed, not shown
    assert "The code it is about: `micro` in times.py (line 1):" in first


def test_the_code_an_assertion_over_several_lines_calls_is_shown(tmp_path: Path) -> None:
    """more-itertools 0e6acdf9b6 ("Raise a clear ValueError for negative n in chunked()"): the traceback
    names the first line of `self.assertRaisesRegex(`, and `chunked` is called three lines below it, so
    no code was shown; the repo map showed the file of `tail()`, which the message names in passing."""
    helpers = "".join(f"def helper_{k}(value):\n    return value + {k}\n\n" for k in range(40))
    filler = {f"mod{n}.py": helpers for n in range(6)}
    chunks = "from itertools import islice\n\n\ndef chunked(items, n):\n    it = iter(items)\n"
    chunks += "    while chunk := list(islice(it, n)):\n        yield chunk\n"
    tails = "".join(f"# tail() keeps the last n items, step {k}\n" for k in range(60))
    tails += "def tail(n, items):\n    return list(items)[-n:]\n"
    test = (
        "import unittest\n\nfrom chunks import chunked\n\n\nclass ChunkedTests(unittest.TestCase):\n"
        "    def test_negative(self):\n        self.assertRaisesRegex(\n            ValueError,\n"
        '            "n must be at least 0",\n            lambda: list(chunked("ABCDE", -1)),\n'
        "        )\n\n\nunittest.main()\n"
    )
    repo = make_repo(
        tmp_path / "proj",
        {**filler, "tails.py": tails, "chunks.py": chunks, "test_chunks.py": test},
    )
    task = "Raise a clear ValueError for negative n in chunked(), matching tail()."
    with FakeOpenAI([reply("DONE"), reply("DONE")], models={MODEL: {"context_window": 8192}}) as api:
        local_bot(api.base_url, 'verify = ["python3 test_chunks.py"]')
        run_cli("run", "small", "--prompt", task, cwd=repo)
        first = last_user_text(api.bodies[0])
    assert 'AssertionError: "n must be at least 0" does not match' in first
    assert "The code it is about: `chunked` in chunks.py (line 4):" in first
    assert first.startswith("# Files\nchunks.py\n```python\nfrom itertools import islice")
