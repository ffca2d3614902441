"""The edit tool on real files: view, create, str_replace, insert, the workdir boundary and the sandbox."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from openbot.agent.tools.base import ToolContext, ToolFailed, ToolOutput
from openbot.agent.tools.editor import _write_nofollow
from openbot.agent.tools.registry import default_tools, run_tool
from openbot.events import ListSink, ToolResult
from openbot.sandbox import kernel_support, policy_for_run
from tests.helpers import make_repo


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


# The edit tool writes from openbot's own (unconfined) process: the sandbox rule is applied by the tool.

needs_landlock = pytest.mark.skipif(
    kernel_support().landlock_abi == 0, reason=f"kernel cannot enforce Landlock: {kernel_support().detail}"
)


def checkout_ctx(repo: Path, tmp_path: Path, mode: str) -> ToolContext:
    """A --no-worktree run in the user's checkout, with the policy `Workspace._confine` builds."""
    policy = policy_for_run(
        mode,
        worktree=repo,
        common_dir=repo / ".git",
        worktree_admin_dir=None,
        tmp_dir=tmp_path / "run-tmp",
        skills_dir=tmp_path / "skills",
        network=False,
    )
    return ToolContext(workdir=repo, session_dir=tmp_path / "session", env={}, sandbox=policy)


def test_git_files_are_never_written_in_any_mode(ctx: ToolContext, tmp_path: Path) -> None:
    work = ctx.workdir
    for rel in [".git/config", ".git/hooks/pre-commit.sample", "vendor/lib/.git", ".GIT/config"]:
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text("[core]\n")
    os.symlink(".git", work / "g")
    before = {p: p.read_bytes() for p in work.rglob("*") if p.is_file()}
    free = policy_for_run(
        "danger-full-access", worktree=work, common_dir=None, worktree_admin_dir=None,
        tmp_dir=tmp_path / "t", skills_dir=None, network=True,
    )  # fmt: skip
    attempts = [
        {"command": "str_replace", "path": ".git/config", "old_str": "[core]", "new_str": "[core]\n\tx = 1"},
        {"command": "create", "path": ".git/hooks/post-checkout", "file_text": "#!/bin/sh\n"},
        {"command": "insert", "path": ".git/config", "insert_line": 0, "new_str": "x"},
        {"command": "create", "path": "g/config", "file_text": "x"},
        {"command": "create", "path": "src/../.git/config", "file_text": "x"},
        {"command": "create", "path": "vendor/lib/.git", "file_text": "gitdir: /tmp/evil\n"},
        {"command": "create", "path": ".GIT/config", "file_text": "x"},
        {"command": "create", "path": str(work / ".git/config"), "file_text": "x"},
    ]
    for sandbox in (None, free):
        ctx.sandbox = sandbox
        for attempt in attempts:
            out = edit(ctx, **attempt)
            assert out.is_error and "git's own files" in out.content and "use git" in out.content, attempt
    assert {p: p.read_bytes() for p in work.rglob("*") if p.is_file()} == before
    assert not (work / ".git/hooks/post-checkout").exists()
    # Reading them stays allowed, and files merely named like git's are fine.
    assert edit(ctx, command="view", path=".git/config").content == "     1\t[core]"
    assert not edit(ctx, command="create", path=".gitignore", file_text="*.o\n").is_error


@needs_landlock
def test_read_only_sandbox_refuses_every_write(repo: Path, tmp_path: Path) -> None:
    ctx = checkout_ctx(repo, tmp_path, "read-only")
    attempts = [
        {"command": "create", "path": "x.txt", "file_text": "x"},
        {"command": "create", "path": "README.md", "file_text": "x"},
        {"command": "str_replace", "path": "README.md", "old_str": "demo", "new_str": "pwned"},
        {"command": "insert", "path": "README.md", "insert_line": 0, "new_str": "x"},
    ]
    for attempt in attempts:
        out = edit(ctx, **attempt)
        assert out.is_error and "'read-only' sandbox forbids writing" in out.content, attempt
    assert not (repo / "x.txt").exists() and (repo / "README.md").read_text() == "# demo\n"
    assert edit(ctx, command="view", path="README.md").content == "     1\t# demo"


@needs_landlock
def test_no_worktree_edits_existing_entries_only(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# demo\n", "src/a.py": "a = 1\n"})
    ctx = checkout_ctx(repo, tmp_path, "workspace-write")
    ok = edit(ctx, command="str_replace", path="README.md", old_str="demo", new_str="edited")
    assert not ok.is_error, ok.content
    assert not edit(ctx, command="create", path="src/deep/new.py", file_text="b = 2\n").is_error
    assert not edit(ctx, command="insert", path="src/a.py", insert_line=1, new_str="c = 3").is_error
    assert (repo / "README.md").read_text() == "# edited\n" and (repo / "src/deep/new.py").exists()
    for path in ("new.txt", "newdir/x.py"):
        out = edit(ctx, command="create", path=path, file_text="x")
        assert out.is_error and "'workspace-write' sandbox forbids writing" in out.content, path
        assert not (repo / path).exists()


@needs_landlock
def test_the_edit_tool_and_the_shell_agree(tmp_path: Path) -> None:
    """What the editor may write is exactly what a confined command may write."""
    repo = make_repo(tmp_path / "repo", {"README.md": "# demo\n", "src/a.py": "a = 1\n"})
    ctx = checkout_ctx(repo, tmp_path, "workspace-write")
    assert ctx.sandbox is not None
    for rel in ["README.md", "src/a.py", "src/new.py", "top.txt", ".git/config", ".git/hooks/x"]:
        shell = subprocess.run(
            ctx.sandbox.wrap(["sh", "-c", 'printf "" >> "$1"', "sh", rel]), cwd=repo, capture_output=True
        )
        editor = edit(ctx, command="create", path=rel, file_text="")
        assert (shell.returncode == 0) == (not editor.is_error), (rel, editor.content)


def test_a_symlink_swapped_in_after_the_checks_is_not_followed(ctx: ToolContext, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, ctx.workdir / "sub")
    for make_dirs in (False, True):
        with pytest.raises(ToolFailed, match="cannot write sub/f"):
            _write_nofollow(ctx.workdir / "sub" / "f", "sub/f", b"x", make_dirs=make_dirs)
    os.symlink(outside / "target", ctx.workdir / "f")
    with pytest.raises(ToolFailed, match="cannot write f"):
        _write_nofollow(ctx.workdir / "f", "f", b"x")
    assert list(outside.iterdir()) == []
