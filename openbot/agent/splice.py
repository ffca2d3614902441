"""Functions a model wrote alone for a Python file that has more (work_mode "edits"): each put in the place
of the one of its name. A small model asked for a long file whole copies it back — 5,500 characters, ~100 s
of a 1.5B model's output on these machines, three times in a row unchanged; asked for the function it
changes, it writes ~60 lines. The rule, as docs/MODELS.md says it:

- a block for an existing `.py` file whose top-level statements are only `def`s, `class`es and imports, at
  least one `def`/`class` named as one in the file, and which leaves out some of the file's top-level
  code, is **the functions it changes**: each replaces the one of its name (its decorators included), a
  new one is added at the file's end, an import the file lacks goes after the file's last top-level import;
- a method sent alone (indented, or at the top level with `self` first) replaces the method of that name
  when exactly one class of the file has it;
- anything else (a block that does not parse, holds other statements, or names nothing of the file) is
  not this module's: the whole-file rules (agent/wholefile.py) judge it.
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_IMPORTS = (ast.Import, ast.ImportFrom)


@dataclass(frozen=True)
class Spliced:
    text: str
    names: list[str]  # the functions and classes replaced or added, as the model named them


def splice(before: str, block: str) -> Spliced | None:
    """`before` with the block's functions in place, None when the block is not functions of the file."""
    old, new = _parse(before), _parse(textwrap.dedent(block))
    if old is None or new is None or not new.body:
        return None
    if not all(isinstance(s, _DEFS + _IMPORTS) for s in new.body):
        return None
    defs = [s for s in new.body if isinstance(s, _DEFS)]
    top = {s.name: s for s in old.body if isinstance(s, _DEFS)}
    methods = _methods(old)
    if not defs or not any(d.name in top or d.name in methods for d in defs):
        return None
    if all(isinstance(s, _DEFS + _IMPORTS) for s in old.body) and {d.name for d in defs} >= set(top):
        return None  # the whole file: the whole-file rules judge it
    lines = before.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    source = textwrap.dedent(block).splitlines(keepends=True)
    cuts: list[tuple[int, int, list[str]]] = []  # (first line, end line, new lines), 0-based, end exclusive
    added: list[str] = []
    for d in defs:
        text = _segment(source, d)
        target = top.get(d.name) or methods.get(d.name)
        if target is None:
            added += ["\n", "\n", *text]
            continue
        indent = " " * target.col_offset
        end = target.end_lineno or target.lineno
        cuts.append((first_line(target) - 1, end, [_indent(t, indent) for t in text]))
    for first, end, text in sorted(cuts, reverse=True):
        lines[first:end] = text
    imports = _missing_imports(old, new, source)
    if imports:
        at = max((s.end_lineno or s.lineno for s in old.body if isinstance(s, _IMPORTS)), default=0)
        lines[at:at] = imports
    return Spliced("".join(lines + added), [d.name for d in defs])


def _parse(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


def _methods(module: ast.Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """Methods whose name exactly one class of the file has (a name two classes share is not guessed)."""
    found: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
    for cls in (s for s in module.body if isinstance(s, ast.ClassDef)):
        for s in cls.body:
            if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.setdefault(s.name, []).append(s)
    return {name: defs[0] for name, defs in found.items() if len(defs) == 1}


def first_line(node: ast.stmt) -> int:
    """The 1-based first line of a statement, a def's decorators included."""
    decorators: list[ast.expr] = getattr(node, "decorator_list", [])
    return min([node.lineno, *(d.lineno for d in decorators)])


def _segment(source: list[str], node: ast.stmt) -> list[str]:
    text = source[first_line(node) - 1 : node.end_lineno or node.lineno]
    if text and not text[-1].endswith("\n"):
        text[-1] += "\n"
    return text


def _indent(line: str, indent: str) -> str:
    return indent + line if line.strip() else line


def _missing_imports(old: ast.Module, new: ast.Module, source: list[str]) -> list[str]:
    have = {ast.dump(s) for s in old.body if isinstance(s, _IMPORTS)}
    out: list[str] = []
    for s in new.body:
        if isinstance(s, _IMPORTS) and ast.dump(s) not in have:
            out += _segment(source, s)
    return out
