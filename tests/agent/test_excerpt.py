"""The lines around a failing line, and a block that is some of them changed (agent/excerpt.py)."""

from __future__ import annotations

from openbot.agent.excerpt import excerpt

CODE = """def f(x):
    a = x + 1
    b = a * 2
    c = b * 1e6
    d = c - 1
    e = d + 2
    return e


def g():
    return 1
"""


def test_the_lines_shown_stay_in_the_function_and_skip_blank_ends() -> None:
    shown = excerpt("m.py", CODE, 7, first=1, last=7)
    assert shown is not None and (shown.start, shown.end) == (3, 7)
    assert excerpt("m.py", CODE, 8) is None  # a blank line is no place


def test_a_block_of_some_lines_replaces_them_reindented() -> None:
    shown = excerpt("m.py", CODE, 4, first=1, last=7)
    assert shown is not None and (shown.start, shown.end) == (1, 7)
    put = shown.put(CODE, "b = a * 2\nc = b * 1000000\nd = c - 1\n")  # its indentation dropped
    assert put == CODE.replace("b * 1e6", "b * 1000000")


def test_a_change_on_the_first_line_is_placed_by_the_other_end_and_the_count() -> None:
    shown = excerpt("m.py", CODE, 4, first=1, last=7)
    assert shown is not None
    assert shown.put(CODE, "    c = b * 10**6\n    d = c - 1\n") == CODE.replace("b * 1e6", "b * 10**6")


def test_the_lines_sent_back_as_shown_leave_the_file_and_other_code_is_not_them() -> None:
    shown = excerpt("m.py", CODE, 4, first=1, last=7)
    assert shown is not None
    assert shown.put(CODE, "    b = a * 2\n    c = b * 1e6\n") == CODE
    assert not shown.takes("def h():\n    return 2\n")
    moved_on = CODE.replace("a * 2", "a * 3")
    assert shown.put(moved_on, "    b = a * 2\n    c = 5\n") is None


def test_a_block_that_adds_lines_past_a_changed_last_line_replaces_to_the_end_of_what_was_shown() -> None:
    """The 1.5B model's block began with the first line shown and ended on a line of its own (it split
    `a, b = 0, 0` in two): from the first line to the end of what was shown."""
    shown = excerpt("m.py", CODE, 4, first=1, last=7)
    assert shown is not None
    block = "    d = c - 1\n    e = d\n    e = e + 2\n    return e\n    # done\n"
    assert shown.put(CODE, block) == CODE.replace(
        "    e = d + 2\n    return e\n", "    e = d\n    e = e + 2\n    return e\n    # done\n"
    )
