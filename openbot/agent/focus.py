"""The function a failed check is about (work_mode "edits"), shown whole to a small model: the function the
failing line is in when that line is the code's, or — when it is a test's assertion — the function of the
code the test calls just before it. A 1.5B model shown a 150-line file and a test's `assertEqual` line
sent the file back unchanged three times (isodate 89f80896e0); the function it had to change
(`parse_time`, called on the line above the assertion) was never named.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from openbot.agent.repomap import is_test
from openbot.agent.splice import first_line
from openbot.files import read_text_capped

MAX_LINES = 80  # a function longer than this is named, not shown (~1,000 tokens)
MAX_FILES = 400  # source files searched for the function a test calls
_SKIP = {"print", "len", "str", "int", "repr", "isinstance", "range", "list", "dict", "set", "tuple"}


@dataclass(frozen=True)
class Focus:
    path: str
    name: str
    first: int  # 1-based first line (its decorators included)
    text: str  # the function's lines, as in the file; "" when it is too long to show

    def shown(self) -> str:
        where = f"`{self.name}` in {self.path} (line {self.first})"
        if not self.text:
            return f"The code it is about: {where}."
        fence = "````" if "```" in self.text else "```"
        return f"The code it is about: {where}:\n{self.path}\n{fence}python\n{self.text.rstrip()}\n{fence}"


def focus(root: Path, files: set[str], path: str, line: int) -> Focus | None:
    """The function `path` line `line` (the place a failed check points at) is about, None if none is
    found: the enclosing function of a source line, the called function of a test's line."""
    source = _source(root, path) if path.endswith(".py") else None
    if source is None:
        return None
    text, tree = source
    inner = _enclosing(tree, line)
    if not is_test(path):
        return _focus(path, text, inner) if inner else None
    calls = _calls_before(inner, line) if inner else []
    for name in reversed(calls):  # the call nearest the failing line first
        found = _defined(root, files, name)
        if found:
            return found
    return None


def _source(root: Path, path: str) -> tuple[str, ast.Module] | None:
    """The file's text and its syntax tree, read once."""
    try:
        text, cut = read_text_capped(root / path, root=root.resolve(), limit=1 << 20)
        return None if cut else (text, ast.parse(text))
    except Exception:  # unreadable, not Python, gone since the check ran: no focus
        return None


def _enclosing(tree: ast.Module, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The innermost function whose lines hold `line`."""
    found = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.lineno <= line <= (node.end_lineno or node.lineno):
                if found is None or node.lineno >= found.lineno:
                    found = node
    return found


def _calls_before(func: ast.AST, line: int) -> list[str]:
    """The names the function calls up to the end of the statement on `line`, in order (`self.assert*`
    and builtins left out): a traceback names a statement's first line, and the code an assertion spread
    over lines is about is called on a later one (`self.assertRaisesRegex(` … `lambda: chunked(x, -1))`)."""
    end = max(
        (s.end_lineno or s.lineno for s in ast.walk(func) if isinstance(s, ast.stmt) and s.lineno == line),
        default=line,
    )
    calls = []
    for node in ast.walk(func):
        if isinstance(node, ast.Call) and node.lineno <= end:
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            if name and not name.startswith("assert") and name not in _SKIP:
                calls.append((node.lineno, node.col_offset, name))
    return [name for _, _, name in sorted(calls)]


def _defined(root: Path, files: set[str], name: str) -> Focus | None:
    """The one top-level function or class named `name` in the checkout's code (tests aside)."""
    hits = []
    for f in sorted(f for f in files if f.endswith(".py") and not is_test(f))[:MAX_FILES]:
        text, tree = _source(root, f) or ("", None)
        for node in tree.body if tree else []:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
                hits.append((f, text, node))
    return _focus(*hits[0]) if len(hits) == 1 else None


def _focus(path: str, text: str, node: ast.stmt) -> Focus:
    first = first_line(node)
    end = node.end_lineno or node.lineno
    lines = text.splitlines(keepends=True)[first - 1 : end]
    name = getattr(node, "name", "?")
    return Focus(path, name, first, "".join(lines) if len(lines) <= MAX_LINES else "")
