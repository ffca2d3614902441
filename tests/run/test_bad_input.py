"""Bad input is refused before anything happens: damaged conversations, bare repositories, and
--skip-git-check where a git dir would become writable to the agent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from openbot import paths
from tests.helpers import complete, git, make_bot, reply, run_cli, sessions, shell


def first_run(repo: Path) -> tuple[str, Path]:
    make_bot("b", [reply("", shell("echo hi > f.txt")), reply(""), reply("")], config="max_iterations = 1")
    proc = run_cli("run", "b", "--json", cwd=repo)
    assert proc.returncode == 3, proc.stderr
    run_id = json.loads(proc.stdout)["run_id"]
    (run_dir,) = paths.bot_home("b").glob(f"workspaces/*/runs/{run_id}")
    return run_id, run_dir


@pytest.mark.parametrize(
    "garbage",
    [
        b"garbage\n",
        b'{"op": "append", "message": "x"}\n',
        b'{"op": "append", "message": {"role": "system", "content": "x"}}\n',
        b'{"op": "append", "message": {"role": "user", "content": [1]}}\n',
        b"[1]\n",
        b"\xff\xfe\n",
    ],
)
def test_a_damaged_conversation_is_refused_before_anything_and_kept(repo: Path, garbage: bytes) -> None:
    run_id, run_dir = first_run(repo)
    conversation = run_dir / "conversation.jsonl"
    lines = conversation.read_bytes().splitlines(keepends=True)
    damaged = lines[0] + garbage + b"".join(lines[1:])  # in the middle: not a torn tail
    conversation.write_bytes(damaged)
    branches = git(repo, "for-each-ref")
    proc = run_cli("run", "b", "--resume", run_id, cwd=repo)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert str(conversation) in line and "line 2 is damaged" in line
    assert conversation.read_bytes() == damaged and len(sessions("b")) == 1
    assert git(repo, "for-each-ref") == branches


def test_a_bare_repository_is_refused_without_suggesting_skip_git_check(tmp_path: Path) -> None:
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    make_bot("b", [reply("", shell("echo pwned > hooks/post-update"), complete())])
    config = (bare / "config").read_bytes()
    for where, flags in [(bare, []), (bare, ["--skip-git-check"]), (bare / "hooks", ["--skip-git-check"])]:
        proc = run_cli("run", "b", *flags, cwd=where)
        assert proc.returncode == 2 and "is a bare repository" in proc.stderr, proc.stderr
        assert "--skip-git-check" not in proc.stderr
    assert not (bare / "hooks" / "post-update").exists() and (bare / "config").read_bytes() == config
    assert not sessions("b")


def test_skip_git_check_refuses_a_directory_that_holds_a_git_dir(tmp_path: Path) -> None:
    work = tmp_path / "work"
    inner = work / "vendor" / "lib"
    inner.mkdir(parents=True)
    git(inner, "init", "-q")
    make_bot("b", [reply("", shell("echo pwned > vendor/lib/.git/hooks/pre-commit"), complete())])
    proc = run_cli("run", "b", "--skip-git-check", cwd=work)
    assert proc.returncode == 2 and "holds a git repository" in proc.stderr, proc.stderr
    assert str(inner / ".git") in proc.stderr and not (inner / ".git/hooks/pre-commit").exists()
    assert not sessions("b")
    plain = tmp_path / "plain"
    plain.mkdir()
    assert run_cli("run", "b", "--skip-git-check", cwd=plain).returncode == 0  # a directory without git


@pytest.mark.parametrize(
    ("model", "close"),
    [
        ("olama:qwen3-coder", "did you mean 'ollama:'?"),
        ("foo:bar", ""),
        ("openai-compatable:x", "openai-compatible"),
    ],
)
def test_a_model_name_with_an_unknown_backend_prefix_is_refused(
    repo: Path, model: str, close: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A typo'd prefix went to Anthropic's API (and told the user to set ANTHROPIC_API_KEY)."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    make_bot("b", [reply("", complete())])
    for flags, source in [(["--model", model], "command line"), ([], "config.md")]:
        if not flags:
            config = paths.bot_home("b") / "config.md"
            config.write_text(config.read_text().replace('"scripted:script.json"', f'"{model}"'))
        proc = run_cli("run", "b", *flags, cwd=repo)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
        (line,) = proc.stderr.strip().splitlines()
        assert source in line and f"'{model.partition(':')[0]}:' names no backend" in line and close in line
    assert not sessions("b")
