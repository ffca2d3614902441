"""The edit tool on real files: view, create, str_replace, insert, and the working-directory boundary."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from openbot.events import ListSink, ToolResult
from openbot.tools.base import ToolContext, ToolOutput
from openbot.tools.registry import default_tools, run_tool


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    work = tmp_path / "work"
    work.mkdir()
    return ToolContext(workdir=work, session_dir=tmp_path / "session", env={}, sink=ListSink())


def edit(ctx: ToolContext, **input: object) -> ToolOutput:
    return run_tool(default_tools(), "edit", dict(input), ctx, "toolu_e")


def test_create_makes_parents_and_overwrites(ctx: ToolContext) -> None:
    out = edit(ctx, command="create", path="src/pkg/mod.py", file_text="a = 1\nb = 2\n")
    assert out.content == "Created src/pkg/mod.py (2 lines)" and not out.is_error
    assert (ctx.workdir / "src/pkg/mod.py").read_text() == "a = 1\nb = 2\n"
    out = edit(ctx, command="create", path=str(ctx.workdir / "src/pkg/mod.py"), file_text="c = 3\n")
    assert out.content.startswith("Overwrote")
    assert (ctx.workdir / "src/pkg/mod.py").read_text() == "c = 3\n"
    assert isinstance(ctx.sink, ListSink)
    assert [e.content for e in ctx.sink.events if isinstance(e, ToolResult)][
        0
    ] == "Created src/pkg/mod.py (2 lines)"


def test_view_file_with_line_numbers_and_ranges(ctx: ToolContext) -> None:
    (ctx.workdir / "f.txt").write_text("".join(f"row {i}\n" for i in range(1, 1001)))
    out = edit(ctx, command="view", path="f.txt").content
    assert out.startswith("     1\trow 1\n     2\trow 2\n")
    assert "[lines 1–400 of 1000; see more with view_range [401, 800]]" in out
    out = edit(ctx, command="view", path="f.txt", view_range=[998, -1]).content
    assert out == "   998\trow 998\n   999\trow 999\n  1000\trow 1000\n[lines 998–1000 of 1000]"
    bad = edit(ctx, command="view", path="f.txt", view_range=[2000, 2001])
    assert bad.is_error and "has 1000 lines" in bad.content


def test_view_directory_two_levels_deep_without_git(ctx: ToolContext) -> None:
    for rel in ["README.md", "src/a.py", "src/deep/b.py", "src/deep/deeper/c.py", ".git/HEAD"]:
        (ctx.workdir / rel).parent.mkdir(parents=True, exist_ok=True)
        (ctx.workdir / rel).write_text("x\n")
    out = edit(ctx, command="view", path=".").content
    assert out.splitlines()[1:] == ["README.md", "src/", "src/a.py", "src/deep/"]


def test_str_replace_exact_unique_match(ctx: ToolContext) -> None:
    path = ctx.workdir / "m.py"
    path.write_bytes(b"def f():\r\n    return 1\r\n\r\ndef g():\r\n    return 1\r\n")
    path.chmod(0o755)
    none = edit(ctx, command="str_replace", path="m.py", old_str="return 2", new_str="return 3")
    assert none.is_error and "0 matches" in none.content
    two = edit(ctx, command="str_replace", path="m.py", old_str="return 1", new_str="return 3")
    assert two.is_error and "matches 2 times" in two.content and "at lines 2, 5" in two.content
    ok = edit(
        ctx,
        command="str_replace",
        path="m.py",
        old_str="def g():\r\n    return 1",
        new_str="def g():\r\n    return 2",
    )
    assert not ok.is_error and "     5\t    return 2" in ok.content
    assert path.read_bytes() == b"def f():\r\n    return 1\r\n\r\ndef g():\r\n    return 2\r\n"
    assert path.stat().st_mode & 0o777 == 0o755


def test_insert_after_a_line_and_at_the_top(ctx: ToolContext) -> None:
    path = ctx.workdir / "list.txt"
    path.write_text("one\ntwo\nthree")
    assert not edit(ctx, command="insert", path="list.txt", insert_line=0, new_str="zero").is_error
    assert not edit(
        ctx, command="insert", path="list.txt", insert_line=2, new_str="one and a half\n"
    ).is_error
    assert not edit(ctx, command="insert", path="list.txt", insert_line=5, new_str="four").is_error
    assert path.read_text() == "zero\none\none and a half\ntwo\nthree\nfour\n"
    out = edit(ctx, command="insert", path="list.txt", insert_line=99, new_str="x")
    assert out.is_error and "out of range" in out.content


def test_paths_outside_the_workdir_are_rejected(ctx: ToolContext, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("do not read\n")
    os.symlink(secret, ctx.workdir / "link.txt")
    os.symlink(tmp_path, ctx.workdir / "up")
    attempts = [
        {"command": "view", "path": "../secret.txt"},
        {"command": "view", "path": "link.txt"},
        {"command": "create", "path": "up/new.txt", "file_text": "x"},
        {"command": "str_replace", "path": str(secret), "old_str": "do", "new_str": "did"},
        {"command": "create", "path": "sub/../../escape.txt", "file_text": "x"},
    ]
    for attempt in attempts:
        out = edit(ctx, **attempt)
        assert out.is_error and "outside the working directory" in out.content, attempt
    assert secret.read_text() == "do not read\n"
    assert not (tmp_path / "new.txt").exists() and not (tmp_path / "escape.txt").exists()


def test_binary_missing_and_bad_input_are_errors(ctx: ToolContext) -> None:
    (ctx.workdir / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0")
    out = edit(ctx, command="view", path="img.png")
    assert out.is_error and "binary file" in out.content
    out = edit(ctx, command="str_replace", path="nope.py", old_str="a", new_str="b")
    assert out.is_error and "does not exist" in out.content
    out = edit(ctx, command="create", path="x.py")
    assert out.is_error and "needs file_text" in out.content
    out = edit(ctx, command="delete", path="x.py")
    assert out.is_error and "must be one of" in out.content
    out = edit(ctx, command="view", path="x.py", view_range=["1", 2])
    assert out.is_error and "view_range[0] must be of type integer" in out.content
