"""The Rust openbot's command-line forms work here too (docs/LEGACY.md), and a run is found without its id:
`run --sleep`, `-b`/`-g` on skills, `history -l`, `skills search`, `skills install owner/repo/skill`,
`run --resume` alone or `--resume last`. Through the real CLI; the registry is a loopback server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from openbot import paths
from tests.helpers import complete, git, make_bot, reply, run_cli, shell
from tests.skills_registry import skills_server

SKILL = "---\nname: brainstorming\ndescription: Think before you code\n---\nList three options first.\n"
SHA = "0123456789abcdef0123456789abcdef01234567"


SEEN: list[str] = []  # the paths the stand-in for the registry and GitHub was asked


@pytest.fixture
def registry() -> Iterator[dict[str, str]]:
    """skills.sh's search API, GitHub's API for the commit a skill is pinned to, and GitHub's raw content
    at that commit."""
    SEEN.clear()
    hits = [{"id": "obra/superpowers/brainstorming", "skillId": "brainstorming", "name": "b",
             "installs": 1234, "source": "obra/superpowers"}]  # fmt: skip
    answers = {
        "/api/search?": json.dumps({"skills": hits, "count": 1}).encode(),
        "/repos/obra/superpowers/commits/HEAD": json.dumps({"sha": SHA}).encode(),
        f"/obra/superpowers/{SHA}/skills/brainstorming/SKILL.md": SKILL.encode(),
    }
    with skills_server(answers, SEEN) as env:
        yield env


def test_skills_search_and_install_by_registry_id_with_short_flags(
    repo: Path, registry: dict[str, str]
) -> None:
    make_bot("fixer", [reply("x")])
    found = run_cli("skills", "search", "brain", "-l", "5", cwd=repo, env=registry)
    assert found.returncode == 0, found.stderr
    assert "obra/superpowers/brainstorming" in found.stdout and "1,234 installs" in found.stdout
    assert any(p.startswith("/api/search?q=brain&limit=5") for p in SEEN)

    out = run_cli(
        "skills", "install", "obra/superpowers/brainstorming", "-b", "fixer", "-y", cwd=repo, env=registry
    )
    assert out.returncode == 0, out.stderr
    installed = paths.bot_skills_dir("fixer") / "brainstorming" / "SKILL.md"
    assert installed.read_text() == SKILL
    listed = run_cli("skills", "list", "fixer", "--json", cwd=repo)
    assert "brainstorming" in [s["name"] for s in json.loads(listed.stdout)]

    out = run_cli("skills", "install", "obra/superpowers/brainstorming", "-g", "-y", cwd=repo, env=registry)
    assert out.returncode == 0, out.stderr
    assert (paths.global_skills_dir() / "brainstorming" / "SKILL.md").is_file()
    gone = run_cli("skills", "remove", "brainstorming", "-g", cwd=repo)
    assert gone.returncode == 0 and not (paths.global_skills_dir() / "brainstorming").exists()


def test_an_unknown_registry_id_is_one_line_exit_2(repo: Path, registry: dict[str, str]) -> None:
    out = run_cli("skills", "install", "nobody/nothing/none", "--global", cwd=repo, env=registry)
    assert out.returncode == 2 and "no SKILL.md for none in nobody/nothing" in out.stderr
    assert "Traceback" not in out.stderr and not paths.global_skills_dir().exists()


def test_run_sleep_and_history_l_are_accepted(repo: Path) -> None:
    make_bot("sleeper", [reply("", shell("true")), reply("", complete("ok"))], config="max_iterations = 2")
    out = run_cli("run", "sleeper", "--sleep", "0", cwd=repo)
    assert out.returncode == 0, out.stderr
    hist = run_cli("history", "sleeper", "-l", "1", cwd=repo)
    assert hist.returncode == 0, hist.stderr
    assert len([line for line in hist.stdout.splitlines() if line.strip()]) == 2  # the header and one run


def test_resume_without_an_id_continues_the_bots_last_run(repo: Path) -> None:
    make_bot("again", [reply("", shell("echo one > one.txt")), reply("first iteration over")],
             config="max_iterations = 1")  # fmt: skip
    first = json.loads(run_cli("run", "again", "--json", cwd=repo).stdout)
    assert first["exit_code"] == 3
    hist = run_cli("history", "again", cwd=repo)
    assert first["run_id"] in hist.stdout  # the id --resume takes is listed

    for form in (["--resume"], ["--resume", "last"]):
        out = run_cli("run", "again", *form, "--json", "-n", "1", cwd=repo)
        resumed = json.loads(out.stdout)
        assert resumed["run_id"] == first["run_id"] and resumed["branch"] == first["branch"], form
        assert f"resuming the last run {first['run_id']}" in out.stderr


def test_resume_alone_with_no_run_is_exit_2_and_an_empty_id_is_refused(repo: Path) -> None:
    make_bot("fresh", [reply("x")])
    out = run_cli("run", "fresh", "--resume", cwd=repo)
    assert out.returncode == 2 and "no run of bot 'fresh' to resume" in out.stderr
    empty = run_cli("run", "fresh", "--resume", "", cwd=repo)
    assert empty.returncode == 2 and "invalid run id ''" in empty.stderr
    assert not (paths.bot_home("fresh") / "workspaces").exists() or not list(
        (paths.bot_home("fresh") / "workspaces").glob("*/runs/*")
    )


def test_a_resumed_scripted_run_goes_on_where_its_script_left_off(repo: Path) -> None:
    first_iteration = [reply("", shell("echo one >> log.txt")), reply("first iteration over")]
    finish = shell("echo two >> log.txt && git add log.txt && git commit -qm finish")
    make_bot("replay", [*first_iteration, reply("", finish), reply("", complete("finished"))])
    first = json.loads(run_cli("run", "replay", "--json", "-n", "1", cwd=repo).stdout)
    assert first["exit_code"] == 3
    out = run_cli("run", "replay", "--resume", "--json", cwd=repo)
    assert out.returncode == 0, out.stderr
    # not replayed from the start: "one" was written once, then the script's next reply ran
    assert git(repo, "show", f"{first['branch']}:log.txt") == "one\ntwo"
