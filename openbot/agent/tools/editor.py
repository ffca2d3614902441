"""The `edit` tool: view, create and edit text files inside the working directory.

The input mirrors Anthropic's text-editor tool (command, path, view_range, file_text, old_str, new_str,
insert_line), which models already know. Every path must resolve — symlinks and `..` included — to a
place inside the working directory. Files are read and written as bytes decoded as UTF-8, so line
endings and the file mode survive an edit.

The tool writes from openbot's own process, which Landlock does not confine, so every write first
passes the rule the run's shell commands are held to (`SandboxPolicy.may_write`), and git's own files
(`.git`, anywhere) are never written in any mode: a `core.fsmonitor` or hook put there runs unconfined
the next time anyone uses git.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal, NotRequired, TypedDict, cast

from openbot.agent.models.base import ToolSpec
from openbot.agent.tools.base import ToolContext, ToolFailed, ToolOutput

MAX_VIEW_LINES = 400
MAX_VIEW_CHARS = 30_000
MAX_LINE_CHARS = 2_000
MAX_DIR_ENTRIES = 400
SKIP_DIRS = {".git"}
SNIPPET_CONTEXT = 4
_DIR_NOFOLLOW = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC

DESCRIPTION = "\n".join(
    [
        "View, create and edit text files in the working directory.",
        "- view: a file with line numbers (page through big files with view_range [start, end]; end -1 =",
        "  to the end), or a directory listing two levels deep.",
        "- create: write file_text to path (overwrites; makes parent directories).",
        "- str_replace: replace old_str with new_str; old_str must match exactly once, whitespace included",
        "  (add surrounding lines to make it unique).",
        "- insert: insert new_str after line insert_line (0 = at the top).",
        "Paths are relative to the working directory (or absolute inside it). Writes follow the sandbox",
        "mode, and never touch .git (use git commands).",
    ]
)

SPEC = ToolSpec(
    name="edit",
    description=DESCRIPTION,
    input_schema={
        "type": "object",
        "properties": {
            "command": {"type": "string", "enum": ["view", "create", "str_replace", "insert"]},
            "path": {
                "type": "string",
                "description": "File or directory (relative paths start at the workdir).",
            },
            "view_range": {"type": "array", "items": {"type": "integer"}, "description": "[start, end]"},
            "file_text": {"type": "string", "description": "create: the whole file."},
            "old_str": {"type": "string", "description": "str_replace: the exact text to replace."},
            "new_str": {"type": "string", "description": "str_replace: the replacement; insert: the text."},
            "insert_line": {"type": "integer", "description": "insert: after this line (0 = top)."},
        },
        "required": ["command", "path"],
        "additionalProperties": False,
    },
)


def resolve_inside(workdir: Path, path: str) -> Path:
    """`path` made absolute and fully resolved; ToolFailed unless it lies inside `workdir`."""
    root = workdir.resolve()
    target = (root / path).resolve()  # an absolute `path` replaces root here
    if target != root and not target.is_relative_to(root):
        raise ToolFailed(f"{path} is outside the working directory {root}; only files inside it can be used")
    return target


def check_writable(ctx: ToolContext, target: Path, shown: str) -> None:
    """ToolFailed unless the edit tool may write `target` (resolved, inside the workdir)."""
    rel = target.relative_to(ctx.workdir.resolve())
    if any(part.casefold() == ".git" for part in rel.parts):
        raise ToolFailed(
            f"{shown} is one of git's own files (.git): the bot may not edit them; use git commands"
        )
    policy = ctx.sandbox
    if policy is not None and not policy.may_write(target):
        why = "it allows no file changes" if policy.mode == "read-only" else "it is not in a writable area"
        raise ToolFailed(f"the {policy.mode!r} sandbox forbids writing {shown}: {why} (see docs/SANDBOX.md)")


def _write_nofollow(target: Path, shown: str, data: bytes, *, make_dirs: bool = False) -> None:
    """Write `target` (fully resolved) by walking down from `/` without following any symlink, so a link
    swapped in after the checks (by a command left running in the background) cannot redirect it."""
    _, *dirs, name = target.parts
    fd = os.open("/", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in dirs:
            try:
                below = os.open(part, _DIR_NOFOLLOW, dir_fd=fd)
            except FileNotFoundError:
                if not make_dirs:
                    raise
                os.mkdir(part, dir_fd=fd)
                below = os.open(part, _DIR_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = below
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
        out = os.open(name, flags, 0o666, dir_fd=fd)
    except OSError as e:
        raise ToolFailed(f"cannot write {shown}: {e.strerror}") from None
    finally:
        os.close(fd)
    with os.fdopen(out, "wb") as f:
        f.write(data)


def _read_text(path: Path, shown: str) -> str:
    if path.is_dir():
        raise ToolFailed(f"{shown} is a directory; use view to list it")
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ToolFailed(f"{shown} does not exist") from None
    if b"\0" in data[:8192]:
        raise ToolFailed(f"{shown} is a binary file; only text files can be viewed or edited")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolFailed(f"{shown} is not UTF-8 text; only text files can be viewed or edited") from None


def _numbered(lines: list[str], first: int) -> str:
    out = []
    for i, line in enumerate(lines, start=first):
        line = line.rstrip("\r\n")
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + f" [... {len(line) - MAX_LINE_CHARS:,} more characters]"
        out.append(f"{i:6}\t{line}")
    return "\n".join(out)


def _snippet(text: str, first_line: int, last_line: int) -> str:
    """The edited lines with a few lines of context, numbered, to confirm an edit."""
    lines = text.splitlines(keepends=True)
    start = max(first_line - SNIPPET_CONTEXT, 1)
    end = min(last_line + SNIPPET_CONTEXT, len(lines))
    return _numbered(lines[start - 1 : end], start)


class EditInput(TypedDict):  # what SPEC's schema admits (the registry checks it before `run`)
    command: Literal["view", "create", "str_replace", "insert"]
    path: str
    view_range: NotRequired[list[int]]
    file_text: NotRequired[str]
    old_str: NotRequired[str]
    new_str: NotRequired[str]
    insert_line: NotRequired[int]


class EditorTool:
    spec = SPEC

    def run(self, input: dict[str, object], ctx: ToolContext, tool_use_id: str) -> ToolOutput:
        args = cast(EditInput, input)
        shown, command = args["path"], args["command"]
        path = resolve_inside(ctx.workdir, shown)
        if command != "view":
            check_writable(ctx, path, shown)
        if command == "view":
            return ToolOutput(self.view(path, shown, args.get("view_range")))
        if command == "create":
            return ToolOutput(self.create(path, shown, _need(input, "file_text")))
        if command == "str_replace":
            new = args.get("new_str", "")
            return ToolOutput(self.str_replace(path, shown, _need(input, "old_str"), new))
        return ToolOutput(self.insert(path, shown, _need(input, "insert_line"), _need(input, "new_str")))

    def view(self, path: Path, shown: str, view_range: list[int] | None) -> str:
        if path.is_dir():
            return _listing(path, shown)
        lines = _read_text(path, shown).splitlines(keepends=True)
        total = len(lines)
        start, end = 1, total
        if view_range is not None:
            if len(view_range) != 2:
                raise ToolFailed("view_range must be [start, end]")
            start, end = view_range[0], total if view_range[1] == -1 else view_range[1]
            if not 1 <= start <= max(total, 1) or end < start:
                raise ToolFailed(f"view_range {view_range} is invalid: {shown} has {total} lines")
            end = min(end, total)
        end = min(end, start + MAX_VIEW_LINES - 1)
        body = _numbered(lines[start - 1 : end], start)
        if len(body) > MAX_VIEW_CHARS:
            body = body[:MAX_VIEW_CHARS].rsplit("\n", 1)[0]
            end = start + body.count("\n")
        if end < total or start > 1:
            body += f"\n[lines {start}–{end} of {total}"
            body += f"; see more with view_range [{end + 1}, {end + MAX_VIEW_LINES}]]" if end < total else "]"
        return body if total else f"{shown} is empty"

    def create(self, path: Path, shown: str, file_text: str) -> str:
        if path.is_dir():
            raise ToolFailed(f"{shown} is a directory")
        existed = path.exists()
        _write_nofollow(path, shown, file_text.encode("utf-8"), make_dirs=True)
        lines = file_text.count("\n") + (0 if file_text.endswith("\n") or not file_text else 1)
        return f"{'Overwrote' if existed else 'Created'} {shown} ({lines} lines)"

    def str_replace(self, path: Path, shown: str, old: str, new: str) -> str:
        if not old:
            raise ToolFailed("old_str must not be empty; use insert or create to add text")
        text = _read_text(path, shown)
        positions = _find_all(text, old)
        if not positions:
            raise ToolFailed(
                f"old_str was not found in {shown} (0 matches); it must match exactly, whitespace and "
                "indentation included — view the file to copy the text"
            )
        if len(positions) > 1:
            at = ", ".join(str(text.count("\n", 0, p) + 1) for p in positions[:20])
            raise ToolFailed(
                f"old_str matches {len(positions)} times in {shown} (at lines {at}); "
                "include more surrounding lines so it matches exactly once"
            )
        pos = positions[0]
        updated = text[:pos] + new + text[pos + len(old) :]
        _write_nofollow(path, shown, updated.encode("utf-8"))
        first = updated.count("\n", 0, pos) + 1
        snippet = _snippet(updated, first, first + new.count("\n"))
        return f"Edited {shown}:\n{snippet}"

    def insert(self, path: Path, shown: str, line: int, new: str) -> str:
        text = _read_text(path, shown)
        lines = text.splitlines(keepends=True)
        if not 0 <= line <= len(lines):
            raise ToolFailed(f"insert_line {line} is out of range: {shown} has {len(lines)} lines (0 = top)")
        if line and not lines[line - 1].endswith("\n"):
            lines[line - 1] += "\n"
        if not new.endswith("\n"):
            new += "\n"
        lines.insert(line, new)
        updated = "".join(lines)
        _write_nofollow(path, shown, updated.encode("utf-8"))
        snippet = _snippet(updated, line + 1, line + new.count("\n"))
        return f"Inserted into {shown}:\n{snippet}"


def _need(input: dict[str, object], key: str) -> Any:
    if key not in input:
        raise ToolFailed(f"the {input['command']} command needs {key}")
    return input[key]


def _find_all(text: str, sub: str) -> list[int]:
    found, pos = [], text.find(sub)
    while pos >= 0:
        found.append(pos)
        pos = text.find(sub, pos + 1)
    return found


def _listing(path: Path, shown: str) -> str:
    """Files and directories two levels deep, .git skipped, capped at MAX_DIR_ENTRIES."""
    entries: list[str] = []
    for dirpath, dirnames, filenames in os.walk(path):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        rel = Path(dirpath).relative_to(path)
        depth = len(rel.parts)
        entries += [f"{rel / d}/" if depth else f"{d}/" for d in dirnames]
        entries += [str(rel / f) if depth else f for f in sorted(filenames)]
        if depth >= 1:
            dirnames[:] = []
        if len(entries) > MAX_DIR_ENTRIES:
            break
    entries.sort()
    tail = "\n[... more entries not shown; view a subdirectory]" if len(entries) > MAX_DIR_ENTRIES else ""
    return f"{shown} (two levels deep):\n" + "\n".join(entries[:MAX_DIR_ENTRIES]) + tail
