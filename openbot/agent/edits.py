"""Edits a model wrote in its reply (work_mode "edits"): whole files, search/replace blocks, one command.

Read as aider reads its `whole` and `diff` formats, and as tolerantly (a SEARCH applied by `replace_once`):

    calc.py                          a path on its own line (`calc.py`, **calc.py**, calc.py:, # calc.py),
    ```python                        then a fenced block: the whole new file
    ...
    ```

    calc.py                          a path, then (fenced or not) one or more blocks
    <<<<<<< SEARCH                   the exact lines now in the file
    =======
    >>>>>>> REPLACE                  what replaces them (an empty SEARCH: added at the end, or a new file)

    ```sh                            a command (sh, bash, shell, console): the first one in a reply runs
    DONE                             a line of its own: the model says the task is done

A path the model slipped on is repaired (`repair`): `./x`, an absolute path inside the checkout, aider's
`path/to/` placeholder, or a wrong directory when one file in the chat (or the repository) has that
name. Nothing here touches a file: agent/editmode.py applies what is read, through the `edit` tool.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from openbot.agent.checkfail import tail

_FENCE = re.compile(r"^\s*(`{3,}|~{3,})\s*([^\s`]*)")
_SEARCH = re.compile(r"^\s*<{5,9} ?SEARCH\b")
_DIVIDER = re.compile(r"^\s*={5,9}\s*$")
_REPLACE = re.compile(r"^\s*>{5,9} ?REPLACE\b")
_DONE = re.compile(r"^[\s*_`#>]*DONE\b(?![-_])")  # DONE, **DONE**, DONE: why
_SHELLS = {"sh", "bash", "shell", "console", "zsh"}
_BARE_NAMES = {"Makefile", "Dockerfile", "VERSION", "LICENSE", "README", "Procfile", "Gemfile"}
PLACEHOLDER = "path/to/"


@dataclass(frozen=True)
class Edit:
    """One file change as the model wrote it: `search` None for a whole file."""

    path: str
    text: str
    search: str | None = None
    cut: bool = False  # its block never closed: the reply ended first


@dataclass
class Parsed:
    edits: list[Edit] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    done: bool = False
    loose: list[str] = field(default_factory=list)  # fenced blocks with no path before them: code shown
    last_path: str = ""  # a SEARCH block with no path of its own is for the file named last
    known: frozenset[str] = frozenset()  # names that are paths even bare (AUTHORS): files, new files


def parse_reply(text: str, known: Collection[str] = ()) -> Parsed:
    """The reply's edits; `known`: the checkout's files and the new ones the task names (a bare name
    like AUTHORS is a path only when known)."""
    out = Parsed(known=frozenset({*known, *(PurePosixPath(k).name for k in known)}))
    lines = text.splitlines(keepends=True)
    i = 0
    while i < len(lines):
        line = lines[i]
        if _SEARCH.match(line):
            i = _search_replace(lines, i, _path_before(lines, i, out.known) or out.last_path, out)
            continue
        fence = _FENCE.match(line)
        if fence:
            i = _fenced(lines, i, fence, out)
            continue
        out.done = out.done or bool(_DONE.match(line))
        i += 1
    return out


def _fenced(lines: list[str], i: int, fence: re.Match[str], out: Parsed) -> int:
    """A fenced block from line `i`: a command, search/replace blocks, or a whole file. The next line."""
    mark, info = fence.group(1), fence.group(2)
    inner = _FENCE.match(lines[i + 2]) if info and i + 2 < len(lines) else None
    if inner and inner.group(2) and path_in(lines[i + 1], out.known):
        return i + 1  # ```python, the path, ```python: the path and its block, one fence too many
    end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == mark), len(lines))
    body = lines[i + 1 : end]
    if any(_SEARCH.match(b) for b in body):
        path = _path_before(lines, i, out.known) or out.last_path
        j = 0
        while j < len(body):
            if _SEARCH.match(body[j]):
                j = _search_replace(body, j, _path_before(body, j, out.known) or path, out)
            else:
                j += 1
        return end + 1
    if info.lower() in _SHELLS:
        out.commands.append("".join(body).strip())
        return end + 1
    path = _path_before(lines, i, out.known) or (info if _pathlike(info) and "." in info else "")
    if path:
        out.edits.append(Edit(path, "".join(body), cut=end == len(lines)))
    else:
        out.loose.append("".join(body))
    return end + 1


def _search_replace(lines: list[str], i: int, path: str, out: Parsed) -> int:
    """One SEARCH/REPLACE block starting at line `i`; the line after it."""
    search: list[str] = []
    replace: list[str] = []
    into, j = search, i + 1
    while j < len(lines) and not _REPLACE.match(lines[j]):
        if into is search and _DIVIDER.match(lines[j]):
            into = replace
        else:
            into.append(lines[j])
        j += 1
    if path:
        out.edits.append(Edit(path, "".join(replace), "".join(search), j >= len(lines)))
        out.last_path = path
    return j + 1


def _path_before(lines: list[str], i: int, known: Collection[str]) -> str:
    """The path on the nearest non-blank line above line `i` (fence lines skipped), or ""."""
    for j in range(i - 1, max(i - 4, -1), -1):
        line = lines[j].strip()
        if not line or _FENCE.match(line):
            continue
        return path_in(line, known)
    return ""


def path_in(line: str, known: Collection[str] = ()) -> str:
    """The file path a line names on its own, in the ways models write one; "" when it names none."""
    line = re.sub(r"^(#+|//|--)\s*", "", line.strip())
    quoted = re.findall(r"`([^`\s]+)`", line)
    if " " in line.strip("*_` :") and quoted and line.endswith(":"):
        line = quoted[-1]  # Here is the updated `calc.py`:
    line = line.strip().strip("*_`'\"").rstrip(":").strip("*_`'\"")
    line = re.sub(r"^(file|filename|path)\s*:\s*", "", line, flags=re.IGNORECASE)
    return line if _pathlike(line) or line in known else ""


def _pathlike(word: str) -> bool:
    if not word or any(c.isspace() for c in word) or word.startswith("-") or len(word) > 200:
        return False
    name = PurePosixPath(word).name
    return "." in name.strip(".") or name.startswith(".") or "/" in word or name in _BARE_NAMES


def repair(
    path: str, files: Collection[str], in_chat: Collection[str], root: str = "", new: Collection[str] = ()
) -> str:
    """The file the model meant by `path` (`files`: the checkout's, `root`: its absolute path): as written
    when it exists, or when it is new in a subdirectory that exists; else the one file in the chat with
    its name (aider's repair of a dropped or wrong directory); else the new file the task named (`new`)
    with that name or stem, whatever its case (`authors.md` for the task's AUTHORS); else that new file."""
    path = path.replace("\\", "/")
    if root and path.startswith(root.rstrip("/") + "/"):
        path = path[len(root.rstrip("/")) + 1 :]
    while path.startswith("./"):
        path = path[2:]
    path = path.removeprefix(PLACEHOLDER) if path not in files else path
    parent = str(PurePosixPath(path).parent)
    if path in files or path in new or parent != "." and any(f.startswith(parent + "/") for f in files):
        return path
    name = PurePosixPath(path).name
    same = sorted({f for f in in_chat if PurePosixPath(f).name == name})
    if len(same) == 1:
        return same[0]
    stem = PurePosixPath(path).stem.lower()
    named = sorted({n for n in new if PurePosixPath(n).name.lower() in (name.lower(), stem)})
    return named[0] if len(named) == 1 else path


def replace_once(text: str, search: str, replace: str) -> str | None:
    """`text` with `search` replaced: exactly, else line by line ignoring whitespace at the line ends,
    then at both ends (the replacement re-indented by the difference). None when it is not there."""
    if search in text:
        return text.replace(search, replace, 1)
    lines, want = text.splitlines(keepends=True), search.splitlines()
    for strip in (str.rstrip, str.strip):
        target = [strip(w) for w in want]
        for i in range(len(lines) - len(want) + 1):
            if [strip(line) for line in lines[i : i + len(want)]] == target:
                new = replace.splitlines(keepends=True)
                if strip is str.strip:
                    new = _reindent(new, _indent(lines[i]), _indent(want[0]))
                return "".join([*lines[:i], *new, *lines[i + len(want) :]])
    return None


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _reindent(replace: list[str], have: str, wrote: str) -> list[str]:
    out = []
    for line in replace:
        body = line[len(wrote) :] if line.startswith(wrote) else line.lstrip(" \t")
        out.append(have + body if line.strip() else line)
    return out


def prose(text: str) -> list[str]:
    """The reply's lines that are words to a reader: not in a fenced or SEARCH/REPLACE block, not a
    path on its own, not DONE."""
    out, fence = [], ""
    for raw in text.splitlines():
        line = raw.strip()
        mark = re.match(r"^(`{3,}|~{3,}|<{5,9} ?SEARCH|>{5,9} ?REPLACE)", line)
        if mark:
            opened = mark.group(1)
            closes = line == fence or fence.startswith("<") and opened.startswith(">")
            fence = "" if fence and closes else fence or opened
            continue
        line = line.strip("#*_ ").strip()
        if not fence and line and line != "DONE" and not path_in(line):
            out.append(line)
    return out


def commit_message(text: str, changed: list[str]) -> str:
    """The reply's first line of prose, else what changed."""
    lines = prose(text)
    return lines[0][:72] if lines else "Edit " + ", ".join(changed)


def summary(text: str, changed: list[str], checked: bool) -> str:
    said = " ".join(prose(text))[:300]
    what = f"Changed {', '.join(changed)}; the check passed. " if changed and checked else ""
    return (what + said).strip() or "Done."


def edited(before: str | None, edit: Edit) -> tuple[str, str]:
    """(the file's new text, "") or ("", why the edit cannot apply)."""
    if edit.search is None:
        return edit.text, ""
    if not edit.search.strip():
        return (before or "") + edit.text, ""
    if before is None:
        return "", "the file does not exist (to create it, write it whole)"
    new = replace_once(before, edit.search, edit.text)
    if new is None:
        return "", f"the SEARCH lines are not in the file; it holds:\n```\n{tail(before, 4000)}\n```"
    return new, ""
