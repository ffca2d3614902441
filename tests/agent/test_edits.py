"""Reading edits from a reply (agent/edits.py) and applying a SEARCH/REPLACE (agent/editmode.py): the shapes
small models write, and the path slips aider repairs. The whole loop is tested through the CLI in
tests/run/test_edit_mode.py."""

from __future__ import annotations

import pytest

from openbot.agent.editprompt import named_files, new_files
from openbot.agent.edits import Edit, commit_message, parse_reply, path_in, repair, replace_once

FILES = {"calc.py", "src/util.py", "pkg/__init__.py", "pkg2/a.py", ".gitignore"}


def test_whole_files_search_replace_a_command_and_done_are_read() -> None:
    reply = (
        "I will fix it.\n\n**calc.py**\n```python\ndef add(a, b):\n    return a + b\n```\n\n"
        "src/util.py\n<<<<<<< SEARCH\nX = 1\n=======\nX = 5\n>>>>>>> REPLACE\n"
        "<<<<<<< SEARCH\nY = 1\n=======\nY = 2\n>>>>>>> REPLACE\n\n```sh\npytest -q\n```\nDONE\n"
    )
    parsed = parse_reply(reply)
    assert parsed.edits == [
        Edit("calc.py", "def add(a, b):\n    return a + b\n"),
        Edit("src/util.py", "X = 5\n", "X = 1\n"),
        Edit("src/util.py", "Y = 2\n", "Y = 1\n"),  # no path of its own: the file named last
    ]
    assert parsed.commands == ["pytest -q"] and parsed.done


@pytest.mark.parametrize(("reply", "done"), [("DONE", True), ("**DONE**", True), ("DONE: X was right.", True),
                                            ("DONE_FLAG = 1", False), ("Not DONE yet", False)])  # fmt: skip
def test_done_is_a_line_that_starts_with_it(reply: str, done: bool) -> None:
    assert parse_reply(reply).done is done


def test_a_block_with_no_path_is_code_shown_not_a_file() -> None:
    parsed = parse_reply("Here is the idea:\n```python\nx = 1\n```\n")
    assert parsed.edits == [] and len(parsed.loose) == 1 and not parsed.done


def test_a_bare_name_is_a_path_when_the_checkout_has_it_or_the_task_names_it() -> None:
    reply = "AUTHORS\n```markdown\nAda Lovelace\n```\nSummary\n```\nx\n```\n"
    assert parse_reply(reply, ["AUTHORS"]).edits == [Edit("AUTHORS", "Ada Lovelace\n")]
    assert parse_reply(reply).edits == []


@pytest.mark.parametrize(
    ("line", "path"),
    [
        ("calc.py", "calc.py"),
        ("`calc.py`", "calc.py"),
        ("# calc.py", "calc.py"),
        ("calc.py:", "calc.py"),
        ("Here is the updated `calc.py`:", "calc.py"),
        ("I see the issue in `calc.py`, let me fix it.", ""),
        ("Here is the fix:", ""),
        ("Makefile", "Makefile"),
    ],
)
def test_a_path_line_as_models_write_it(line: str, path: str) -> None:
    assert path_in(line) == path


@pytest.mark.parametrize(
    ("written", "meant"),
    [
        ("path/to/calc.py", "calc.py"),  # aider's placeholder
        ("lib/calc.py", "calc.py"),  # a directory that does not exist: the file in the chat
        ("util.py", "src/util.py"),  # the directory dropped
        ("./src/util.py", "src/util.py"),
        ("/checkout/src/util.py", "src/util.py"),
        ("pkg2/__init__.py", "pkg2/__init__.py"),  # new, in a directory that exists: as written
        ("path/to/VERSION", "VERSION"),
        ("new/thing.py", "new/thing.py"),
        ("authors.md", "AUTHORS"),  # the new file the task named, whatever its case and extension
    ],
)
def test_path_slips_are_repaired(written: str, meant: str) -> None:
    in_chat = ["calc.py", "src/util.py", "pkg/__init__.py"]
    assert repair(written, FILES, in_chat, "/checkout", ["AUTHORS"]) == meant


def test_search_replace_matches_exactly_then_ignoring_whitespace_and_keeps_the_indent() -> None:
    text = "def f():\n    x = 1\n    return x\n"
    assert replace_once(text, "x = 1\n", "x = 5\n") == "def f():\n    x = 5\n    return x\n"
    loose = replace_once(text, "x = 1  \nreturn x\n", "x = 5\nreturn x + 1\n")
    assert loose == "def f():\n    x = 5\n    return x + 1\n"
    assert replace_once(text, "y = 2\n", "y = 3\n") is None


def test_the_files_a_task_names_and_the_new_ones() -> None:
    task = "Fix util.py and calc.py; create a file named AUTHORS and docs/usage.md, e.g. now."
    assert named_files(task, FILES) == ["src/util.py", "calc.py"]
    assert new_files(task, FILES) == ["AUTHORS", "docs/usage.md"]


def test_a_dotted_module_name_names_its_file() -> None:
    files = {"cachetools/__init__.py", "cachetools/func.py", "src/isodate/isotzinfo.py", "setup.py"}
    task = "Fix #163: Support user_function with cachetools.func decorators; see isodate.isotzinfo."
    assert named_files(task, files) == ["cachetools/func.py", "src/isodate/isotzinfo.py"]
    assert named_files("Use cachetools for it, e.g. os.path.join.", files) == []


def test_the_commit_message_is_the_first_line_of_prose() -> None:
    reply = "calc.py\n```python\nx = 1\n```\nSet x to 1.\nDONE"
    assert commit_message(reply, ["calc.py"]) == "Set x to 1."
    assert commit_message("calc.py\n```\nx\n```", ["calc.py"]) == "Edit calc.py"


def test_a_path_inside_a_fence_before_its_own_fence_is_the_path_of_that_block() -> None:
    """The 1.5B model wrote ```python, the path, ```python, the lines, ```: taken as a block with no path,
    the path and the fence went into the code."""
    parsed = parse_reply("```python\nsrc/m.py\n```python\nX = 2\n```\n", ["src/m.py"])
    assert parsed.edits == [Edit("src/m.py", "X = 2\n")] and parsed.loose == []
    plain = parse_reply("```\nbuild/\n```\n", [".gitignore"])
    assert plain.edits == [] and plain.loose == ["build/\n"]
