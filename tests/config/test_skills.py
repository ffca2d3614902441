"""Skill files, discovery, layer precedence, install (file, folder, git URL) and remove."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from openbot import paths
from openbot.config import skill_install, skills
from openbot.errors import ConfigError, GitError, NotFoundError, UsageError
from tests.helpers import make_repo


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def skill_md(name: str, description: str = "", body: str = "Body.") -> str:
    return f"---\nname: {name}\ndescription: {description or name + ' skill'}\n---\n\n{body}\n"


@pytest.fixture
def shipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "shipped-skills"
    write(root / "tdd.md", skill_md("tdd", body="Write the test first."))
    write(root / "commits.md", skill_md("commits"))
    monkeypatch.setattr(paths, "SHIPPED_SKILLS", root)
    return root


def test_load_skill_with_frontmatter(tmp_path: Path) -> None:
    text = "\ufeff---\nname: review\ndescription: 'Review: carefully'\nlicense: MIT\n---\n\n# Steps\nLook.\n"
    path = tmp_path / "x.md"
    path.write_bytes(text.encode("utf-8"))
    s = skills.load_skill(path, "global")
    assert (s.name, s.description, s.body, s.path, s.source) == (
        "review",
        "Review: carefully",
        "# Steps\nLook.",
        path,
        "global",
    )


def test_load_skill_without_frontmatter_uses_stem(tmp_path: Path) -> None:
    s = skills.load_skill(write(tmp_path / "lint.md", "Run ruff.\n"), "repo")
    assert (s.name, s.description, s.body) == ("lint", "", "Run ruff.")


def test_unquoted_colon_is_config_error_with_hint(tmp_path: Path) -> None:
    path = write(tmp_path / "bad.md", "---\nname: bad\ndescription: use it: always\n---\nx\n")
    with pytest.raises(ConfigError) as e:
        skills.load_skill(path, "global")
    assert str(path) in e.value.message and "YAML" in e.value.message and "quote" in e.value.hint


@pytest.mark.parametrize(
    "meta", ["name: 42", "name: [a, b]", "description: no", "name: ../escape", "name: README"]
)
def test_bad_names_and_descriptions(tmp_path: Path, meta: str) -> None:
    path = write(tmp_path / "s.md", f"---\n{meta}\n---\nx\n")
    with pytest.raises(ConfigError) as e:
        skills.load_skill(path, "global")
    assert str(path) in e.value.message


def test_frontmatter_that_is_not_a_mapping(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="key: value"):
        skills.load_skill(write(tmp_path / "s.md", "---\n- a\n- b\n---\nx\n"), "global")


def test_unclosed_frontmatter(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not closed"):
        skills.load_skill(write(tmp_path / "s.md", "---\nname: s\nbody\n"), "global")


def test_discover_agent_skills_layout(tmp_path: Path) -> None:
    d = tmp_path / "skills"
    write(d / "pdf" / "SKILL.md", "---\ndescription: Read PDFs\n---\nUse pdftotext.\n")
    write(d / "pdf" / "scripts" / "extract.py", "print(1)\n")
    write(d / "plain.md", "Plain.\n")
    write(d / "README.md", "About this collection.\n")
    write(d / "notes.txt", "not a skill\n")
    (d / "empty-dir").mkdir()
    found = skills.discover(d, "global")
    assert [(s.name, s.description, s.path) for s in found] == [
        ("pdf", "Read PDFs", d / "pdf" / "SKILL.md"),
        ("plain", "", d / "plain.md"),
    ]
    assert skills.discover(tmp_path / "missing", "global") == []


def test_discover_refuses_two_skills_of_one_name(tmp_path: Path) -> None:
    write(tmp_path / "a.md", skill_md("same"))
    write(tmp_path / "b.md", skill_md("same"))
    with pytest.raises(ConfigError, match="two skills named 'same'"):
        skills.discover(tmp_path, "global")


def test_precedence_bot_wins_over_repo_and_global(repo: Path, shipped: Path) -> None:
    write(paths.global_skills_dir() / "style.md", skill_md("style", body="global"))
    write(paths.global_skills_dir() / "only-global.md", skill_md("only-global"))
    write(paths.repo_skills_dir(repo) / "style.md", skill_md("style", body="repo"))
    write(paths.bot_skills_dir("fixer") / "style" / "SKILL.md", skill_md("style", body="bot"))
    found = skills.load_skills("fixer", repo, [])
    assert [(s.name, s.source, s.body) for s in found] == [
        ("only-global", "global", "Body."),
        ("style", "bot", "bot"),
    ]


def test_repo_wins_over_global_and_shipped(repo: Path, shipped: Path) -> None:
    write(paths.global_skills_dir() / "tdd.md", skill_md("tdd", body="global"))
    write(paths.repo_skills_dir(repo) / "tdd.md", skill_md("tdd", body="repo"))
    (s,) = [s for s in skills.load_skills("fixer", repo, ["*"]) if s.name == "tdd"]
    assert (s.source, s.body) == ("repo", "repo")


def test_committed_bot_skills_win_over_home_bot_skills(repo: Path) -> None:
    write(repo / ".openbot" / "bots" / "ci" / "config.md", "Review.\n")
    write(repo / ".openbot" / "bots" / "ci" / "skills" / "x.md", skill_md("x", body="committed"))
    write(paths.bot_skills_dir("ci") / "x.md", skill_md("x", body="home"))
    assert [(s.source, s.body) for s in skills.load_skills("ci", repo, [])] == [("bot", "committed")]
    # Another bot does not see ci's committed skills.
    assert skills.load_skills("other", repo, []) == []


def test_shipped_skills_are_opt_in(shipped: Path) -> None:
    assert skills.load_skills("b", None, []) == []
    assert [s.name for s in skills.load_skills("b", None, ["tdd"])] == ["tdd"]
    assert [s.name for s in skills.load_skills("b", None, ["*"])] == ["commits", "tdd"]
    assert {s.source for s in skills.load_skills("b", None, ["*"])} == {"shipped"}


def test_unknown_shipped_skill(shipped: Path) -> None:
    with pytest.raises(NotFoundError) as e:
        skills.load_skills("b", None, ["tddd"])
    assert "shipped_skills" in e.value.message and "tdd" in e.value.hint


def test_install_single_file(tmp_path: Path) -> None:
    src = write(tmp_path / "src" / "anything.md", skill_md("lint"))
    dest = tmp_path / "home-skills"
    (s,) = skill_install.install_skill(str(src), dest)
    assert (s.name, s.path) == ("lint", dest / "lint.md")
    assert stat.S_IMODE(s.path.stat().st_mode) == 0o600 and stat.S_IMODE(dest.stat().st_mode) == 0o700


def test_install_agent_skill_folder_and_dir_of_md(tmp_path: Path) -> None:
    folder = tmp_path / "pdf"
    write(folder / "SKILL.md", "Use pdftotext.\n")
    write(folder / "scripts" / "run.sh", "#!/bin/sh\necho hi\n").chmod(0o755)
    dest = tmp_path / "dest"
    (s,) = skill_install.install_skill(str(folder), dest)
    assert s.path == dest / "pdf" / "SKILL.md"
    assert stat.S_IMODE((dest / "pdf" / "scripts" / "run.sh").stat().st_mode) == 0o700
    write(tmp_path / "many" / "a.md", "A\n")
    write(tmp_path / "many" / "b.md", "B\n")
    assert [s.name for s in skill_install.install_skill(str(tmp_path / "many"), dest)] == ["a", "b"]
    assert [s.name for s in skills.discover(dest, "global")] == ["a", "b", "pdf"]


def test_install_refuses_clash_without_force(tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    skill_install.install_skill(str(write(tmp_path / "v1" / "lint.md", "old\n")), dest)
    new = str(write(tmp_path / "v2" / "lint.md", "new\n"))
    with pytest.raises(UsageError) as e:
        skill_install.install_skill(new, dest)
    assert "already installed" in e.value.message and "--force" in e.value.hint
    assert (dest / "lint.md").read_text() == "old\n"
    skill_install.install_skill(new, dest, force=True)
    assert (dest / "lint.md").read_text() == "new\n"


def test_install_bad_sources(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError):
        skill_install.install_skill(str(tmp_path / "nope"), tmp_path / "dest")
    with pytest.raises(UsageError, match=r"\.md"):
        skill_install.install_skill(str(write(tmp_path / "x.txt", "x")), tmp_path / "dest")
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError, match="no skills found"):
        skill_install.install_skill(str(tmp_path / "empty"), tmp_path / "dest")
    bad = write(tmp_path / "bad" / "b.md", "---\ndescription: a: b\n---\n")
    with pytest.raises(ConfigError):
        skill_install.install_skill(str(bad.parent), tmp_path / "dest")
    assert not (tmp_path / "dest").exists()


def test_install_from_git_url(tmp_path: Path) -> None:
    src = make_repo(
        tmp_path / "skills-repo",
        {
            "README.md": "# My skills\n",
            "skills/review/SKILL.md": skill_md("review"),
            "skills/deploy.md": "Ship.\n",
        },
    )
    dest = tmp_path / "dest"
    found = skill_install.install_skill(f"file://{src}", dest, approve=lambda remote, skills: None)
    assert [s.name for s in found] == ["deploy", "review"]
    assert (dest / "review" / "SKILL.md").is_file() and not (dest / "review" / ".git").exists()
    assert not (dest / "README.md").exists()


def test_install_from_bare_repo_whose_root_is_one_skill(tmp_path: Path) -> None:
    work = make_repo(
        tmp_path / "work", {"SKILL.md": "---\ndescription: Whole repo\n---\nDo.\n", "ref.txt": "r"}
    )
    bare = tmp_path / "pdf-tools.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True)
    (s,) = skill_install.install_skill(str(bare), tmp_path / "dest")
    assert (s.name, s.description) == ("pdf-tools", "Whole repo")
    assert (tmp_path / "dest" / "pdf-tools" / "ref.txt").read_text() == "r"


def test_install_from_bad_git_url(tmp_path: Path) -> None:
    with pytest.raises(GitError, match="git clone") as e:
        skill_install.install_skill(f"file://{tmp_path}/missing.git", tmp_path / "dest")
    # Bug fixed: only git's last stderr line ("and the repository exists.") was shown.
    assert "does not appear to be a git repository" in e.value.message
    assert "repository exists" not in e.value.message and "fatal:" not in e.value.message


def test_remove_file_and_folder(tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    write(dest / "lint.md", skill_md("lint"))
    write(dest / "pdf" / "SKILL.md", "x\n")
    write(dest / "pdf" / "extra.txt", "x\n")
    assert skill_install.remove_skill("pdf", dest) == dest / "pdf"
    assert not (dest / "pdf").exists()
    assert skill_install.remove_skill("lint", dest) == dest / "lint.md"
    assert list(dest.iterdir()) == []


def test_remove_by_frontmatter_name(tmp_path: Path) -> None:
    write(tmp_path / "file-stem.md", skill_md("real-name"))
    assert skill_install.remove_skill("real-name", tmp_path) == tmp_path / "file-stem.md"


def test_remove_unknown_suggests(tmp_path: Path) -> None:
    write(tmp_path / "lint.md", "x\n")
    with pytest.raises(NotFoundError) as e:
        skill_install.remove_skill("lnt", tmp_path)
    assert "lint" in e.value.hint


BAD_YAML = "---\ndescription: use it: always\n---\nBody.\n"


def test_bad_skill_files_are_skipped_and_reported(repo: Path) -> None:
    # Bug fixed: one bad skill (maybe written by the bot itself) made every later run fail at start.
    write(paths.bot_skills_dir("sb") / "learned.md", BAD_YAML)
    write(paths.bot_skills_dir("sb") / "good.md", skill_md("good"))
    write(paths.global_skills_dir() / "broken" / "SKILL.md", "---\nname: [1, 2]\n---\n")
    write(paths.repo_skills_dir(repo) / "repo-bad.md", "---\nname: x\n")
    assert [s.name for s in skills.load_skills("sb", repo, [])] == ["good"]
    found, warnings = skills.load_skills_checked("sb", repo, [])
    assert [s.name for s in found] == ["good"] and len(warnings) == 3
    by_file = {w.split(": ", 2)[1]: w for w in warnings}
    learned = by_file[str(paths.bot_skills_dir("sb") / "learned.md")]
    assert "invalid YAML" in learned and "`openbot skills remove learned --bot sb`" in learned
    broken = by_file[str(paths.global_skills_dir() / "broken" / "SKILL.md")]
    assert "must be a string" in broken and "`openbot skills remove broken --global`" in broken
    repo_bad = by_file[str(paths.repo_skills_dir(repo) / "repo-bad.md")]
    assert "not closed" in repo_bad and f"fix or delete {paths.repo_skills_dir(repo)}" in repo_bad
    assert all("\n" not in w for w in warnings)


def test_scan_reports_duplicates_and_keeps_the_first(tmp_path: Path) -> None:
    write(tmp_path / "a.md", skill_md("same", body="first"))
    write(tmp_path / "b.md", skill_md("same", body="second"))
    found, invalid = skills.scan(tmp_path, "global")
    assert [(s.name, s.body) for s in found] == [("same", "first")]
    assert [(i.name, i.path) for i in invalid] == [("b", tmp_path / "b.md")]
    assert "two skills named 'same'" in invalid[0].reason


def test_remove_an_invalid_skill_by_file_or_folder_name(tmp_path: Path) -> None:
    # Bug fixed: `skills remove` parsed every skill first and failed with the same parse error.
    write(tmp_path / "learned.md", BAD_YAML)
    write(tmp_path / "pdf" / "SKILL.md", BAD_YAML)
    write(tmp_path / "ok.md", skill_md("ok"))
    assert skill_install.remove_skill("learned", tmp_path) == tmp_path / "learned.md"
    assert skill_install.remove_skill("pdf", tmp_path) == tmp_path / "pdf"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ok.md"]


def test_install_force_replaces_an_invalid_skill(tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    write(dest / "lint.md", BAD_YAML)
    src = write(tmp_path / "src" / "lint.md", skill_md("lint"))
    with pytest.raises(UsageError, match="already installed"):
        skill_install.install_skill(str(src), dest)
    (s,) = skill_install.install_skill(str(src), dest, force=True)
    assert s.name == "lint" and skills.discover(dest, "x")[0].description == "lint skill"


def test_install_of_a_bad_skill_is_refused(tmp_path: Path) -> None:
    src = write(tmp_path / "src" / "bad.md", BAD_YAML)
    with pytest.raises(ConfigError, match="invalid YAML"):
        skill_install.install_skill(str(src), tmp_path / "dest")
    assert not (tmp_path / "dest").exists()


def test_links_out_fifos_and_oversized_files_are_invalid_skills_not_read(repo: Path, tmp_path: Path) -> None:
    bot_dir = paths.bot_skills_dir("sb")
    write(bot_dir / "real.md", "No frontmatter: named after the file.\n")
    (bot_dir / "alias.md").symlink_to("real.md")  # a link inside the directory is fine
    (bot_dir / "env.md").symlink_to("/proc/self/environ")
    os.mkfifo(bot_dir / "pipe.md")
    write(bot_dir / "big.md", "x" * (skills.SKILL_FILE_LIMIT + 1))
    outside = write(tmp_path / "notes" / "private.md", skill_md("private"))
    (repo / ".openbot").mkdir()
    (repo / ".openbot" / "skills").symlink_to(outside.parent)  # the repo's skills dir leads out of the repo
    found, invalid = skills.check_skills("sb", repo, [])
    assert sorted(s.name for s in found) == ["alias", "real"]
    reasons = {i.name: i.reason for i in invalid}
    assert sorted(reasons) == ["big", "env", "pipe", "private"]
    assert "symlink out of" in reasons["env"] and "symlink out of" in reasons["private"]
    assert "it is a FIFO, not a regular file" in reasons["pipe"]
    assert "larger than 128 kB" in reasons["big"]


def test_skills_past_the_prompt_budget_are_left_out_and_reported(tmp_path: Path) -> None:
    body = "y" * (skills.SKILL_FILE_LIMIT - 100)
    for name in ("a", "b", "c"):
        write(paths.bot_skills_dir("sb") / f"{name}.md", skill_md(name, body=body))
    found, warnings = skills.load_skills_checked("sb", None, [])
    assert [s.name for s in found] == ["a", "b"]
    [warning] = warnings
    assert "c.md: left out of the prompt" in warning and "256 kB" in warning


def test_install_refuses_a_symlinked_destination_dir(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "dest").symlink_to(tmp_path / "elsewhere")
    src = write(tmp_path / "src" / "lint.md", skill_md("lint"))
    with pytest.raises(UsageError, match="is a symlink"):
        skill_install.install_skill(str(src), tmp_path / "dest")
    with pytest.raises(UsageError, match="is a symlink"):
        skill_install.remove_skill("lint", tmp_path / "dest")
    assert list((tmp_path / "elsewhere").iterdir()) == []


def test_install_and_remove_replace_a_planted_link_never_its_target(tmp_path: Path) -> None:
    dest, victim = tmp_path / "dest", tmp_path / "victim"
    victim.mkdir()
    dest.mkdir()
    (dest / "lint.md").symlink_to(victim / ".profile")  # dangling: a write through it creates the file
    (dest / "pdf").symlink_to(victim)
    src = write(tmp_path / "src" / "lint.md", skill_md("lint"))
    write(tmp_path / "src" / "pdf" / "SKILL.md", "Read PDFs.\n")
    for source in (src, src.parent / "pdf"):
        with pytest.raises(UsageError, match="already installed"):
            skill_install.install_skill(str(source), dest)
        skill_install.install_skill(str(source), dest, force=True)
    assert list(victim.iterdir()) == []
    assert not (dest / "lint.md").is_symlink() and (dest / "pdf" / "SKILL.md").read_text() == "Read PDFs.\n"
    (dest / "gone").symlink_to(victim)
    (dest / "gone.md").symlink_to(victim / "x.md")
    write(victim / "x.md", "keep")
    assert skill_install.remove_skill("gone", dest) == dest / "gone.md"  # the .md stem wins the name
    assert (victim / "x.md").read_text() == "keep" and not os.path.lexists(dest / "gone.md")


def test_install_from_a_source_with_links_and_fifos_copies_only_real_files(tmp_path: Path) -> None:
    src = tmp_path / "src" / "tool"
    write(src / "SKILL.md", "Use it.\n")
    write(src / "scripts" / "run.sh", "echo hi\n").chmod(0o755)
    (src / "key").symlink_to("/proc/self/environ")
    os.mkfifo(src / "pipe")
    (s,) = skill_install.install_skill(str(src), tmp_path / "dest")
    assert sorted(p.name for p in s.root.rglob("*")) == ["SKILL.md", "run.sh", "scripts"]
    assert stat.S_IMODE((s.root / "scripts" / "run.sh").stat().st_mode) == 0o700
    (src / "SKILL.md").unlink()
    (src / "SKILL.md").symlink_to("/proc/self/environ")  # the skill itself a link out of its folder
    with pytest.raises(ConfigError, match="symlink out of"):
        skill_install.install_skill(str(src), tmp_path / "dest2")
