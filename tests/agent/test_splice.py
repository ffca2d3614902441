"""agent/splice.py: a Python file's functions sent alone, each put in place of the one of its name."""

from __future__ import annotations

from openbot.agent.splice import splice

FILE = '''"""Keys."""
import functools

X = 1


class Key(tuple):
    value = None

    def __hash__(self):
        return 1

    def __add__(self, other):
        return Key(self + other)


@functools.cache
def hashkey(*args):
    return Key(args)


def typedkey(*args):
    return hashkey(*args)
'''


def test_a_function_replaces_the_one_of_its_name_decorators_included() -> None:
    s = splice(FILE, "@functools.lru_cache\ndef hashkey(*args, **kw):\n    return Key(args + tuple(kw))\n")
    assert s is not None and s.names == ["hashkey"]
    assert "@functools.lru_cache\ndef hashkey(*args, **kw):\n    return Key(args + tuple(kw))\n" in s.text
    assert "@functools.cache" not in s.text and "def typedkey(*args):" in s.text and "X = 1" in s.text


def test_a_method_sent_alone_replaces_the_method_indented_as_in_its_class() -> None:
    s = splice(FILE, "def __hash__(self):\n    return 2\n")
    assert s is not None and "    def __hash__(self):\n        return 2\n\n    def __add__" in s.text


def test_a_new_function_beside_a_known_one_is_added_at_the_end_and_a_new_import_after_the_imports() -> None:
    block = "import pickle\n\n\ndef typedkey(*args):\n    return hashkey(*args, type)\n\n\n"
    block += "def dump(k):\n    return pickle.dumps(k)\n"
    s = splice(FILE, block)
    assert s is not None and s.names == ["typedkey", "dump"]
    assert s.text.index("import pickle") < s.text.index("X = 1")
    assert s.text.rstrip().endswith("def dump(k):\n    return pickle.dumps(k)")


def test_what_is_not_functions_of_the_file_is_left_to_the_whole_file_rules() -> None:
    assert splice(FILE, FILE) is None  # the whole file (a docstring and an assignment in it)
    assert splice(FILE, "X = 2\n") is None  # a statement that is not a function
    assert splice(FILE, "def other():\n    pass\n") is None  # names nothing of the file
    assert splice(FILE, "def hashkey(:\n") is None  # does not parse
    only_defs = "def a():\n    return 1\n\n\ndef b():\n    return 2\n"
    assert splice(only_defs, "def a():\n    return 3\n\n\ndef b():\n    return 4\n") is None  # all of it
