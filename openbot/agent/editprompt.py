"""What a model reads in work_mode "edits": a short way of working (no tools, no memory) and a first message
that holds the files the task names, bounded by the window (docs/MODELS.md, "Work mode").

Which files: every path the task or the instructions name that is a file of the checkout (by its path,
or by its name when one file has it), then — when the whole checkout's text fits in a quarter of the
window — every other file too (a tiny repository is shown whole). All of it within a third of the window
(estimated as everywhere else: agent/context.py); a file that does not fit is named, with how to read it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from openbot.agent.context import estimate_tokens
from openbot.agent.repomap import relevant
from openbot.files import read_text_capped

OPERATING = """\
# How you work (openbot)
You change the files of a git repository by writing them in your reply; openbot saves, commits and \
checks them. To change or create a file, write its path on a line of its own, then the whole file in a \
fenced block — every line of it, the old lines you keep included, never "..." or "rest unchanged". \
For example, to add a function to a calc.py that holds `def add`, reply:

calc.py
```python
def add(a, b):
    return a + b


def sub(a, b):
    return a - b
```

For a long file you may instead write its path, then only the lines to change:
calc.py
<<<<<<< SEARCH
    return a - b
=======
    return a + b
>>>>>>> REPLACE

To run a command (to read a file not shown, or one the task asks for), write it in one ```sh block. \
Nobody answers questions: decide and act, and write your edits in your reply."""

REMINDER = (
    "Reply with each file to change or create: its path alone on a line, then its entire new content in a "
    "fenced block (every line, the ones you keep too)."
)
LONG = (
    " {} is long: for it, write its path, then only the lines to change, as <<<<<<< SEARCH (the exact "
    "lines now in the file) ======= (the new lines) >>>>>>> REPLACE."
)
# a long Python file: the functions changed, each whole (agent/splice.py puts them in place) — a 1.5B model
# asked for SEARCH/REPLACE copied the whole 150-line file back, unchanged, ~100 s of output each time
LONG_PY = (
    " {} is long: for it, write its path, then only the functions you change, each whole from its `def` "
    "line, in a fenced block (openbot puts each in place of the old one)."
)
_LANGS = {".py": "python", ".js": "javascript", ".ts": "typescript", ".sh": "sh", ".md": "markdown"}
_LANGS |= {".toml": "toml", ".json": "json", ".yml": "yaml", ".yaml": "yaml", ".rs": "rust", ".go": "go"}
_TOKEN = re.compile(r"[\w./-]*[\w/]")
_NAMED = re.compile(r"\bfile\s+(?:named|called)\s+[`'\"]?([\w][\w./-]*)")
_FILE_NAME = re.compile(r"[\w-]{2,}\.[A-Za-z][A-Za-z0-9]{0,5}|\.[A-Za-z][\w.-]+")
_MODULE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
MAX_LISTED = 50
LONG_LINES = (
    80  # a shown file longer than this is changed by SEARCH/REPLACE: written whole, it is slow and cut
)
SKIP_DIRS = {".git", ".venv", "venv", "node_modules", "__pycache__", ".mypy_cache", ".pytest_cache"}


@dataclass
class Shown:
    """The first message's files: what was shown, and what did not fit."""

    text: str = ""
    in_chat: list[str] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)
    new: list[str] = field(default_factory=list)  # files the task names that do not exist yet
    long: list[str] = field(default_factory=list)  # shown files to change by SEARCH/REPLACE, not whole


def named_files(text: str, files: set[str]) -> list[str]:
    """The checkout's files `text` names, in the order named: by path, by a name only one file has, or
    by a dotted module name."""
    by_name: dict[str, list[str]] = {}
    for f in sorted(files):
        by_name.setdefault(PurePosixPath(f).name, []).append(f)
    named: list[str] = []
    for token in _TOKEN.findall(text):
        token = token.removeprefix("./").rstrip("/")
        hit = token if token in files else None
        if hit is None and len(by_name.get(token, [])) == 1 and ("." in token or "/" in token):
            hit = by_name[token][0]
        if hit is None and _MODULE.fullmatch(token):  # `pkg.mod` as Python names it
            hit = _module_file(token, files)
        if hit and hit not in named:
            named.append(hit)
    return named


def _module_file(dotted: str, files: set[str]) -> str | None:
    """The file of a dotted module name (`cachetools.func`): `a/b.py` or `a/b/__init__.py`, at the top or
    under `src/`, when exactly one exists — a commit message names a module as code imports it."""
    stem = dotted.replace(".", "/")
    found = [f"{top}{stem}{end}" for top in ("", "src/") for end in (".py", "/__init__.py")]
    hits = [f for f in found if f in files]
    return hits[0] if len(hits) == 1 else None


def new_files(text: str, files: set[str]) -> list[str]:
    """Files `text` names that the checkout does not have: `a file named X`, or a name with an extension."""
    found = [m.group(1) for m in _NAMED.finditer(text)]
    found += [t for t in _TOKEN.findall(text) if _FILE_NAME.fullmatch(PurePosixPath(t).name)]
    new: list[str] = []
    for name in found:
        name = name.removeprefix("./").rstrip(".,:;")
        if name and name not in files and name not in new and named_files(name, files) == []:
            new.append(name)
    return new


def show_files(task: str, root: Path, files: set[str], window: int, failing: Sequence[str] = ()) -> Shown:
    """The files section of the first message (see the module's docstring for which files); `failing`:
    the file the check's failure before any change is about, shown first in place of the repo map's."""
    budget = window // 3
    named = named_files(task, files)
    order = [*(f for f in failing if f in files), *(f for f in named if f not in failing)]
    found: list[str] = []
    if sum(_size(root / f) for f in files) <= window // 4 * 4:  # ~4 characters a token
        order += [f for f in sorted(files) if f not in order]
    elif (
        not failing
    ):  # the files the task's words point at (agent/repomap.py): fewer beside the ones it names
        found = [f for f in relevant(task, root, files, 2 if named else 4) if f not in order]
        order += found
    shown = Shown(new=new_files(task, files))
    parts: list[str] = []
    for f in order:
        text = _text(root, f, budget * 4)
        block = _block(f, text) if text is not None else ""
        cost = estimate_tokens(block)
        if not block or cost > budget:
            if (
                f in named or f in found or f in failing
            ):  # a file of a tiny repository that is not text is only listed
                shown.left_out.append(f)
            continue
        budget -= cost
        parts.append(block)
        shown.in_chat.append(f)
        if text is not None and text.count("\n") > LONG_LINES:
            shown.long.append(f)
    if shown.left_out:
        parts.append(
            f"Not shown, too large for the model's window (~{window:,} tokens): {', '.join(shown.left_out)}. "
            "To read part of one, run `sed -n 1,60p FILE` in a ```sh block."
        )
    if shown.new:
        parts.append(f"Not in the repository yet (the task names it): {', '.join(shown.new)}")
    rest = sorted(files - set(shown.in_chat) - set(shown.left_out))
    if rest:
        more = f" (and {len(rest) - MAX_LISTED} more)" if len(rest) > MAX_LISTED else ""
        parts.append("Other files in the repository: " + ", ".join(rest[:MAX_LISTED]) + more)
    shown.text = "\n\n".join(parts)
    return shown


def first_message(task: str, shown: Shown, checks: tuple[str, ...], failing: str = "") -> str:
    """The files, what openbot does with an edit (and what its check says now), then the task: last,
    where a small model looks."""
    after = "After each reply openbot saves and commits the files you wrote"
    if checks:
        after += f", then runs {', '.join(f'`{c}`' for c in checks)} and tells you what failed"
    after += f".\n\n{failing.rstrip()}" if failing else "."
    files = shown.text or "(the repository has no files yet)"
    py = [f for f in shown.long if f.endswith(".py")]
    other = [f for f in shown.long if not f.endswith(".py")]
    reminder = REMINDER + (LONG_PY.format(", ".join(py)) if py else "")
    reminder += LONG.format(", ".join(other)) if other else ""
    return f"# Files\n{files}\n\n# Check\n{after}\n\n# Task\n{task.strip()}\n\n{reminder}\n"


def _block(path: str, text: str) -> str:
    fence = "````" if "```" in text else "```"
    lang = _LANGS.get(PurePosixPath(path).suffix, "")
    return f"{path}\n{fence}{lang}\n{text}{'' if text.endswith(chr(10)) or not text else chr(10)}{fence}"


def _size(path: Path) -> int:
    try:
        return path.lstat().st_size
    except OSError:
        return 0


def _text(root: Path, rel: str, limit: int) -> str | None:
    """A text file's content, None when it is binary, not UTF-8, too large or unreadable."""
    try:
        text, cut = read_text_capped(root / rel, root=root, limit=limit)
    except Exception:  # a link out of the checkout, a FIFO, not UTF-8: not shown
        return None
    return None if cut or "\0" in text else text


def listing(root: Path, limit: int = 2000) -> set[str]:
    """The checkout's files (relative, `/`-separated), without git's and tools' own directories."""
    found: set[str] = set()
    for top, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        rel = Path(top).relative_to(root)
        names = [n for n in names if n not in SKIP_DIRS and not os.path.islink(os.path.join(top, n))]
        found.update((rel / n).as_posix() for n in names)  # a linked worktree's `.git` is a file
        if len(found) >= limit:
            break
    return found
