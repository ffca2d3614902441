"""`openbot skills list|show|install|remove` on a temp OPENBOT_HOME and real git repos."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from openbot import paths
from tests.helpers import git, make_repo, read_pty, run_cli
from tests.skills_registry import skills_server


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def skill_md(name: str, body: str = "Body.") -> str:
    return f"---\nname: {name}\ndescription: The {name} skill\n---\n{body}\n"


@pytest.fixture
def shipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "shipped-skills"
    write(root / "tdd.md", skill_md("tdd"))
    write(root / "commits.md", skill_md("commits"))
    monkeypatch.setattr(paths, "SHIPPED_SKILLS", root)
    return root


def listed(cli, *args: str, cwd: Path) -> list[tuple[str, str]]:
    r = cli("skills", "list", *args, "--json", cwd=cwd)
    assert r.exit_code == 0, r.output
    return [(row["name"], row["source"]) for row in json.loads(r.stdout)]


def test_list_without_bot_shows_everything_in_reach(cli, repo: Path, shipped: Path) -> None:
    write(paths.global_skills_dir() / "style.md", skill_md("style"))
    write(paths.repo_skills_dir(repo) / "repo-only.md", skill_md("repo-only"))
    assert listed(cli, cwd=repo) == [
        ("commits", "shipped"),
        ("tdd", "shipped"),
        ("style", "global"),
        ("repo-only", "repo"),
    ]
    r = cli("skills", "list")
    assert "The style skill" in r.stdout and str(paths.global_skills_dir() / "style.md") in r.stdout


def test_list_for_bot_is_exactly_its_prompt_skills(cli, repo: Path, shipped: Path) -> None:
    cli("bots", "create", "fixer")
    config = paths.bot_home("fixer") / "config.md"
    config.write_text('+++\nshipped_skills = ["tdd"]\n+++\nFix.\n')
    write(paths.global_skills_dir() / "style.md", skill_md("style", "global"))
    write(paths.repo_skills_dir(repo) / "style.md", skill_md("style", "repo"))
    write(paths.bot_skills_dir("fixer") / "style.md", skill_md("style", "bot"))
    write(paths.bot_skills_dir("other") / "theirs.md", skill_md("theirs"))
    assert listed(cli, "fixer", cwd=repo) == [("tdd", "shipped"), ("style", "bot")]
    r = cli("skills", "show", "style", "--bot", "fixer")
    assert r.exit_code == 0 and "source: bot" in r.stdout and r.stdout.rstrip().endswith("bot")
    r = cli("skills", "show", "style")  # without a bot: the repo's copy is the most specific
    assert "source: repo" in r.stdout


def test_list_for_unknown_bot(cli, tmp_path: Path) -> None:
    r = cli("skills", "list", "ghost", cwd=tmp_path)
    assert r.exit_code == 2 and "no bot named 'ghost'" in r.stderr


def test_list_shows_a_broken_skill_as_invalid(cli, tmp_path: Path) -> None:
    # Bug fixed: one broken skill made `skills list` fail altogether.
    bad = write(paths.global_skills_dir() / "bad.md", "---\ndescription: a: b\n---\n")
    write(paths.global_skills_dir() / "good.md", skill_md("good"))
    r = cli("skills", "list", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    (bad_row,) = [line for line in r.stdout.splitlines() if line.startswith("bad ")]
    assert "global" in bad_row and f"invalid: {bad}: invalid YAML" in bad_row and "quote" in bad_row
    rows = {row["name"]: row for row in json.loads(cli("skills", "list", "--json").stdout)}
    assert rows["good"]["error"] is None and "invalid YAML" in rows["bad"]["error"]
    r = cli("skills", "show", "bad")
    assert r.exit_code == 2 and str(bad) in r.stderr and "invalid YAML" in r.stderr


def test_a_bot_with_a_broken_learned_skill_can_list_and_remove_it(cli, repo: Path) -> None:
    # Bug fixed: the bad skill blocked `skills list <bot>` and `skills remove` with the same parse error.
    cli("bots", "create", "sb", cwd=repo)
    learned = write(paths.bot_skills_dir("sb") / "learned.md", "---\nname: a: b\n---\nAlways.\n")
    write(paths.bot_skills_dir("sb") / "kept.md", skill_md("kept"))
    r = cli("skills", "list", "sb")
    assert r.exit_code == 0, r.output
    assert "learned  bot      invalid:" in r.stdout and "The kept skill" in r.stdout
    r = cli("skills", "remove", "learned", "--bot", "sb")
    assert r.exit_code == 0, r.output
    assert f"removed {learned}" in r.stdout and not learned.exists()
    assert listed(cli, "sb", cwd=repo) == [("kept", "bot")]


def test_show_unknown(cli, tmp_path: Path) -> None:
    write(paths.global_skills_dir() / "style.md", skill_md("style"))
    r = cli("skills", "show", "styel", cwd=tmp_path)
    assert r.exit_code == 2 and "did you mean 'style'" in r.stderr


def test_install_global_and_remove(cli, tmp_path: Path) -> None:
    src = write(tmp_path / "src" / "lint.md", skill_md("lint"))
    r = cli("skills", "install", str(src), "--global", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    assert (paths.global_skills_dir() / "lint.md").is_file() and "installed lint" in r.stdout
    r = cli("skills", "install", str(src), "--global")
    assert r.exit_code == 2 and "--force" in r.stderr
    assert cli("skills", "install", str(src), "--global", "--force").exit_code == 0
    r = cli("skills", "remove", "lint", "--global")
    assert r.exit_code == 0 and not (paths.global_skills_dir() / "lint.md").exists()
    r = cli("skills", "remove", "lint", "--global")
    assert r.exit_code == 2 and "no skill named 'lint'" in r.stderr


def test_install_for_bot_from_git_url(cli, tmp_path: Path) -> None:
    cli("bots", "create", "fixer", cwd=tmp_path)
    src = make_repo(tmp_path / "skills-src", {"review/SKILL.md": skill_md("review")})
    r = cli("skills", "install", f"file://{src}", "--bot", "fixer", "--yes")
    assert r.exit_code == 0, r.output
    assert (paths.bot_skills_dir("fixer") / "review" / "SKILL.md").is_file()
    assert listed(cli, "fixer", cwd=tmp_path) == [("review", "bot")]
    assert cli("skills", "remove", "review", "--bot", "fixer").exit_code == 0
    assert listed(cli, "fixer", cwd=tmp_path) == []


def test_install_for_unknown_bot(cli, tmp_path: Path) -> None:
    src = write(tmp_path / "lint.md", "x\n")
    r = cli("skills", "install", str(src), "--bot", "ghost", cwd=tmp_path)
    assert r.exit_code == 2 and "no bot named 'ghost'" in r.stderr
    assert not paths.bot_home("ghost").exists()


@pytest.mark.parametrize("where", [[], ["--global", "--bot", "fixer"]])
def test_install_and_remove_need_exactly_one_target(cli, tmp_path: Path, where: list[str]) -> None:
    cli("bots", "create", "fixer", cwd=tmp_path)
    src = write(tmp_path / "lint.md", "x\n")
    for args in (["install", str(src)], ["remove", "lint"]):
        r = cli("skills", *args, *where)
        assert r.exit_code == 2 and "exactly one of --global or --bot" in r.stderr
    assert not paths.global_skills_dir().exists() and not paths.bot_skills_dir("fixer").exists()


def test_install_missing_source(cli, tmp_path: Path) -> None:
    r = cli("skills", "install", str(tmp_path / "nope.md"), "--global", cwd=tmp_path)
    assert r.exit_code == 2 and "nope.md" in r.stderr


def test_a_run_survives_a_broken_skill_the_bot_wrote(repo: Path) -> None:
    # Bug fixed: a bad skill in the bot's skills dir made every later run of the bot fail at start.
    from tests.helpers import complete, make_bot, reply, run_cli

    make_bot("sb", [reply("", complete("ok"))])
    write(paths.bot_skills_dir("sb") / "learned.md", "---\ndescription: use it: always\n---\nBody.\n")
    out = run_cli("run", "sb", cwd=repo)
    assert out.returncode == 0, out.stderr


SHA = "89abcdef0123456789abcdef0123456789abcdef"


SEEN: list[str] = []  # the paths the stand-in for the registry and GitHub was asked


@pytest.fixture
def github() -> Iterator[dict[str, str]]:
    """GitHub's API names the commit HEAD is at; raw content serves the skill at that commit only."""
    SEEN.clear()
    answers = {
        "/repos/acme/tools/commits/HEAD": json.dumps({"sha": SHA}).encode(),
        f"/acme/tools/{SHA}/skills/review/SKILL.md": skill_md("review", "Read every diff twice.").encode(),
    }
    with skills_server(answers, SEEN) as env:
        yield env


def test_a_local_path_that_does_not_exist_is_exit_2_and_never_downloaded(
    tmp_path: Path, github: dict[str, str]
) -> None:
    (tmp_path / "acme").mkdir()  # a local folder: `acme/tools/review` means a path under it
    for source in ("./acme/tools/review", "acme/tools/review", "/nowhere/a/b", "~/nowhere/x", "x/y", "r.md"):
        out = run_cli("skills", "install", source, "--global", "--yes", cwd=tmp_path, env=github)
        assert out.returncode == 2, (source, out.stdout, out.stderr)
        assert f"{source}: no such file or directory (nothing was downloaded)" in out.stderr
        assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr
    assert SEEN == [] and not paths.global_skills_dir().exists()


def test_a_registry_skill_is_pinned_shown_and_installed_only_with_yes(
    tmp_path: Path, github: dict[str, str]
) -> None:
    out = run_cli("skills", "install", "acme/tools/review", "--global", cwd=tmp_path, env=github)
    assert out.returncode == 2 and "pass --yes to install it" in out.stderr, out.stderr
    assert "Read every diff twice." in out.stdout and f"at commit {SHA}" in out.stdout
    assert not paths.global_skills_dir().exists()

    out = run_cli("skills", "install", "acme/tools/review", "--global", "--yes", cwd=tmp_path, env=github)
    assert out.returncode == 0, out.stderr
    assert (paths.global_skills_dir() / "review" / "SKILL.md").read_text() == skill_md(
        "review", "Read every diff twice."
    )
    pins = json.loads((paths.global_skills_dir() / ".pins.json").read_text())
    assert pins["review"]["commit"] == SHA and pins["review"]["source"] == "acme/tools/review"
    assert all("/main/" not in p for p in SEEN)  # fetched at the commit, never a moving branch


def test_a_skill_from_a_git_url_is_pinned_and_needs_yes(tmp_path: Path) -> None:
    src = make_repo(tmp_path / "skills-repo", {"skills/deploy/SKILL.md": skill_md("deploy", "Ship it.")})
    head = git(src, "rev-parse", "HEAD")
    out = run_cli("skills", "install", f"file://{src}", "--global", cwd=tmp_path)
    assert out.returncode == 2 and "pass --yes" in out.stderr and "Ship it." in out.stdout
    assert f"at commit {head}" in out.stdout and not paths.global_skills_dir().exists()
    out = run_cli("skills", "install", f"file://{src}", "--global", "-y", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert json.loads((paths.global_skills_dir() / ".pins.json").read_text())["deploy"]["commit"] == head


def test_show_of_a_bots_own_skill_without_bot_says_to_pass_it(cli, tmp_path: Path) -> None:
    write(paths.bot_home("sb") / "config.md", "+++\n+++\nWork.\n")
    write(paths.bot_home("sb") / "skills" / "kept.md", skill_md("kept"))
    r = cli("skills", "show", "kept", cwd=tmp_path)
    assert r.exit_code == 2 and "openbot skills show kept --bot sb" in r.stderr, r.stderr
    assert cli("skills", "show", "kept", "--bot", "sb", cwd=tmp_path).exit_code == 0


def test_an_unreachable_raw_address_names_the_variable_that_moves_it(
    tmp_path: Path, github: dict[str, str]
) -> None:
    """The registry and API answer; the raw address is a closed port: the hint names OPENBOT_SKILLS_RAW
    (it named OPENBOT_SKILLS_REGISTRY, which moves nothing that failed)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}"
    env = {**github, "OPENBOT_SKILLS_RAW": closed}
    out = run_cli("skills", "install", "acme/tools/review", "--global", "--yes", cwd=tmp_path, env=env)
    assert out.returncode != 0 and "OPENBOT_SKILLS_RAW" in out.stderr, out.stderr
    assert "OPENBOT_SKILLS_REGISTRY" not in out.stderr


@pytest.mark.parametrize("answer", ["n", "y"])
def test_at_a_terminal_a_registry_skill_is_installed_only_on_a_yes(
    tmp_path: Path, github: dict[str, str], answer: str
) -> None:
    main, child = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "openbot", "skills", "install", "acme/tools/review", "--global"],
        cwd=tmp_path,
        env={**os.environ, **github},
        stdin=child,
        stdout=child,
        stderr=child,
    )
    os.close(child)
    os.write(main, f"{answer}\n".encode())
    out = read_pty(main).decode(errors="replace")
    code = proc.wait(timeout=120)
    assert "Read every diff twice." in out and "install it?" in out, out
    installed = (paths.global_skills_dir() / "review" / "SKILL.md").is_file()
    assert (code, installed) == ((0, True) if answer == "y" else (1, False)), out
