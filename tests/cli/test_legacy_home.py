"""A Rust openbot's `~/.openbot` (tests/legacy_fixture.py) used as it is, through the real CLI: `bots list`,
`memory show`, `history` (both Rust history formats), a run that adopts the directory-name workspace, and
a second repository of the same name that is told, not merged."""

from __future__ import annotations

import json
from pathlib import Path

from openbot import paths
from openbot.state.project import resolve_project
from tests.helpers import complete, make_repo, reply, run_cli, shell
from tests.legacy_fixture import THREAD, rust_home


def _script(tmp_path: Path) -> Path:
    script = tmp_path / "script.json"
    responses = [reply("Checking.", shell("cat README.md")), reply("", complete("Read the README."))]
    script.write_text(json.dumps({"responses": responses}))
    return script


def test_bots_list_accepts_rust_configs(tmp_path: Path, openbot_home: Path) -> None:
    rust_home(openbot_home)
    r = run_cli("bots", "list", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    rows = {line.split()[0]: line for line in r.stdout.splitlines()}
    assert "gpt-5.3-codex" in rows["fixer"] and "Fixes flaky tests" in rows["fixer"]
    assert "o4-mini" in rows["auditor"] and "invalid" not in r.stdout
    assert "notes" in rows  # a config.md without frontmatter is all instructions, as in the Rust tool
    notes = [line for line in r.stderr.splitlines() if "stop_phrase" in line]
    assert len(notes) == 2 and all("is ignored" in n and "session_complete" in n for n in notes)
    shown = run_cli("bots", "show", "fixer", cwd=tmp_path)
    assert shown.returncode == 0 and "stop_phrase" in shown.stderr and "skip_git_check" in shown.stdout
    listed = json.loads(run_cli("bots", "list", "--json", cwd=tmp_path).stdout)
    assert {b["name"]: b["model"] for b in listed}["fixer"] == "gpt-5.3-codex"


def test_unknown_keys_are_still_errors_next_to_legacy_ones(tmp_path: Path, openbot_home: Path) -> None:
    bot = openbot_home / "bots" / "odd"
    bot.mkdir(parents=True)
    (bot / "config.md").write_text('+++\nstop_phrase = "DONE"\nstop_phrases = 1\n+++\nx\n')
    r = run_cli("bots", "show", "odd", cwd=tmp_path)
    assert r.returncode == 2 and "unknown key 'stop_phrases'" in r.stderr and "Traceback" not in r.stderr
    (bot / "config.md").write_text("+++\nstop_phrase = 3\n+++\nx\n")
    r = run_cli("bots", "show", "odd", cwd=tmp_path)
    assert r.returncode == 2 and "key 'stop_phrase' must be a string" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_memory_and_history_before_the_first_run(tmp_path: Path, openbot_home: Path) -> None:
    rust_home(openbot_home)
    repo = make_repo(tmp_path / "src" / "App")  # the Rust slug is "app"
    r = run_cli("memory", "fixer", "show", cwd=repo)
    assert r.returncode == 0, r.stderr
    assert "flaky: test_retry sleeps 1s" in r.stdout and "runner: pytest -q" in r.stdout
    assert "showing the Rust openbot's state" in r.stderr and "import-legacy" in r.stderr
    r = run_cli("history", "fixer", cwd=repo)
    assert r.returncode == 0, r.stderr
    rows = r.stdout.splitlines()[1:]
    assert [row.split()[0] for row in rows] == ["3", "2", "1"]
    assert "legacy" in rows[0] and "Fixed test_timeout." in rows[0] and "Listed the flaky" in rows[2]
    assert (
        "review" in rows[0] and "1m38s" in rows[0] and "merge" in rows[2]
    )  # the Rust action texts, as a word
    assert len(rows) == 3  # a multi-line action text does not break the table
    r = run_cli("history", "fixer", "--session", "2", cwd=repo)
    assert r.returncode == 0, r.stderr
    assert "Looking at the test suite." in r.stdout  # the streamed deltas, joined
    assert "bash -lc pytest -q" in r.stdout and "exit 1" in r.stdout
    assert "Rust openbot" in r.stdout and f"{THREAD}-s2" in r.stdout
    r = run_cli("history", "fixer", "--session", "3", cwd=repo)
    assert "git merge openbot/fixer-1771850000" in r.stdout  # the review commands, in full
    r = run_cli("history", "fixer", "--session", "1", cwd=repo)
    assert r.returncode == 0 and "no events were kept" in r.stdout
    # nothing moved yet
    assert (openbot_home / "bots" / "fixer" / "workspaces" / "app").is_dir()


def test_a_run_adopts_the_directory_name_state(tmp_path: Path, openbot_home: Path) -> None:
    rust_home(openbot_home)
    repo = make_repo(tmp_path / "src" / "app")
    r = run_cli("run", "fixer", "--model", f"scripted:{_script(tmp_path)}", cwd=repo)
    assert r.returncode == 0, r.stderr
    slug = resolve_project(repo).slug
    workspaces = openbot_home / "bots" / "fixer" / "workspaces"
    assert "adopted the Rust openbot's state" in r.stderr and "stop_phrase" in r.stderr
    assert not (workspaces / "app").exists() and (workspaces / slug / "memory.json").is_file()
    marker = json.loads((workspaces / "app.adopted.json").read_text())
    assert marker["slug"] == slug
    # The prompt had the Rust memory and sessions; the new session is numbered after them.
    conversation = "".join(p.read_text() for p in (workspaces / slug / "runs").glob("*/conversation.jsonl"))
    assert "test_retry sleeps 1s" in conversation and "Fixed test_timeout." in conversation
    rows = run_cli("history", "fixer", cwd=repo).stdout.splitlines()[1:]
    assert [row.split()[0] for row in rows] == ["4", "3", "2", "1"] and "completed" in rows[0]
    shown = run_cli("memory", "fixer", "show", cwd=repo)
    assert "flaky: test_retry sleeps 1s" in shown.stdout and "showing the Rust" not in shown.stderr
    # The Rust sessions are still there, unchanged, next to openbot's.
    assert (workspaces / slug / "history" / f"{THREAD}-s3" / "metadata.json").is_file()

    other = make_repo(tmp_path / "elsewhere" / "app")  # same name, another repository
    r = run_cli("memory", "fixer", "show", cwd=other)
    assert f"no memory for fixer in {resolve_project(other).slug}" in r.stdout
    assert "was adopted by" in r.stderr
    r = run_cli("run", "fixer", "--model", f"scripted:{_script(tmp_path)}", cwd=other)
    assert r.returncode == 0, r.stderr
    assert "was adopted by" in r.stderr and "starts with its own" in r.stderr
    assert run_cli("history", "fixer", cwd=other).stdout.splitlines()[1].split()[0] == "1"


def test_skip_git_check_from_a_rust_config(tmp_path: Path, openbot_home: Path) -> None:
    """auditor says skip_git_check = true: it runs in a plain directory, and adopts that directory's state."""
    rust_home(openbot_home)
    legacy = openbot_home / "bots" / "auditor" / "workspaces" / "notes-dir"
    legacy.mkdir(parents=True)
    (legacy / "memory.json").write_text('{"entries": {"seen": "README"}}')
    plain = tmp_path / "Notes_Dir"
    plain.mkdir()
    (plain / "README.md").write_text("hi\n")
    r = run_cli("run", "auditor", "--model", f"scripted:{_script(tmp_path)}", cwd=plain)
    assert r.returncode == 0, r.stderr
    assert "adopted" in r.stderr
    assert "seen: README" in run_cli("memory", "auditor", "show", cwd=plain).stdout


def test_import_legacy_global_memory(tmp_path: Path, openbot_home: Path) -> None:
    rust_home(openbot_home)
    repo = make_repo(tmp_path / "other")
    store = paths.memory_file("fixer", resolve_project(repo).slug)
    store.parent.mkdir(parents=True)
    store.write_text('{"entries": {"ci": "Buildkite"}}')
    legacy = openbot_home / "bots" / "fixer" / "memory.json"
    before = legacy.read_bytes()
    r = run_cli("memory", "fixer", "import-legacy", cwd=repo)
    assert r.returncode == 0, r.stderr
    assert "imported 1 new note(s)" in r.stdout and "kept this project's own value of 'ci'" in r.stdout
    assert "is kept as it was" in r.stdout and legacy.read_bytes() == before
    shown = run_cli("memory", "fixer", "show", cwd=repo).stdout
    assert "style: black, 88 columns" in shown and "ci: Buildkite" in shown
    again = run_cli("memory", "fixer", "import-legacy", "--overwrite", cwd=repo)
    assert "imported 0 new" in again.stdout and "replaced (--overwrite): 'ci'" in again.stdout
    assert "ci: GitHub Actions" in run_cli("memory", "fixer", "show", cwd=repo).stdout


def test_import_legacy_refuses_damaged_or_missing_files(tmp_path: Path, openbot_home: Path) -> None:
    rust_home(openbot_home)
    repo = make_repo(tmp_path / "other")
    legacy = openbot_home / "bots" / "fixer" / "memory.json"
    for text, why in (
        ('{"entries": {"a": ', "not valid JSON"),
        ('{"entries": {"a": 1}}', "not a string"),
        ("[]", "expected an object"),
    ):
        legacy.write_text(text)
        r = run_cli("memory", "fixer", "import-legacy", cwd=repo)
        assert r.returncode == 2 and why in r.stderr and str(legacy) in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
        assert legacy.read_text() == text
    assert not paths.memory_file("fixer", resolve_project(repo).slug).exists()
    legacy.unlink()
    r = run_cli("memory", "fixer", "import-legacy", cwd=repo)
    assert r.returncode == 2 and "no legacy memory for fixer" in r.stderr
