"""`openbot trust`: what a repository commits under `.openbot/` is trusted by content, per repository."""

from __future__ import annotations

from pathlib import Path

from openbot.state import trust
from tests.helpers import git, run_cli

DANGER = '+++\nsandbox = "danger-full-access"\nnetwork = true\nmodel = "scripted:s.json"\n+++\nWork.\n'


def commit(repo: Path, rel: str, text: str) -> Path:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", f"add {rel}")
    return path


def test_trust_records_the_hash_and_a_change_needs_trust_again(repo: Path, openbot_home: Path) -> None:
    config = commit(repo, ".openbot/bots/ci/config.md", DANGER)
    commit(repo, ".openbot/skills/style.md", "Use tabs.\n")
    proc = run_cli("trust", "ci", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert "trusted bot:ci" in proc.stdout and 'sandbox "danger-full-access", network on' in proc.stdout
    assert "trusted skills" in proc.stdout  # the repository's skills it brings
    (record,) = (openbot_home / "trust").glob("*.json")
    assert (record.stat().st_mode & 0o077) == 0
    listing = run_cli("trust", "--list", cwd=repo).stdout
    assert "(this repository)" in listing and listing.count("current") == 2
    config.write_text(DANGER + "One more line.\n")
    listing = run_cli("trust", "--list", cwd=repo).stdout
    assert "bot:ci" in listing and "CHANGED" in listing and listing.count("current") == 1
    proc = run_cli("trust", "--revoke", "ci", cwd=repo)
    assert proc.returncode == 0 and "revoked: bot:ci" in proc.stdout
    proc = run_cli("trust", "--revoke", cwd=repo)
    assert "revoked: skills" in proc.stdout and not record.exists()


def test_a_new_file_in_the_bot_directory_changes_its_hash(repo: Path) -> None:
    commit(repo, ".openbot/bots/ci/config.md", DANGER)
    before = trust.bot_subject(repo, "ci").sha256
    commit(repo, ".openbot/bots/ci/s.json", '{"responses": []}')
    after = trust.bot_subject(repo, "ci").sha256
    assert before and after and before != after


def test_trust_is_per_repository_identity(tmp_path: Path, repo: Path) -> None:
    commit(repo, ".openbot/bots/ci/config.md", DANGER)
    assert run_cli("trust", cwd=repo).returncode == 0
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(repo), str(other))  # same content, another repository
    store = trust.TrustStore.load(trust_identity(other))
    assert not store.trusted(trust.bot_subject(other, "ci"))
    assert "(this repository)" not in run_cli("trust", "--list", cwd=other).stdout


def trust_identity(path: Path) -> str:
    from openbot.state.project import resolve_project

    return resolve_project(path).identity


def test_trust_refuses_what_it_cannot_trust(tmp_path: Path, repo: Path, openbot_home: Path) -> None:
    outside = run_cli("trust", cwd=tmp_path)
    assert outside.returncode == 2 and "not inside a git repository" in outside.stderr
    nothing = run_cli("trust", cwd=repo)
    assert nothing.returncode == 2 and "nothing to trust" in nothing.stderr
    commit(repo, ".openbot/bots/bad/config.md", "+++\nsandbox = 3\n+++\n")
    bad = run_cli("trust", "bad", cwd=repo)
    assert bad.returncode == 2 and "sandbox" in bad.stderr and "Traceback" not in bad.stderr
    unknown = run_cli("trust", "nope", cwd=repo)
    assert unknown.returncode == 2 and "no bot 'nope' is committed" in unknown.stderr
    commit(repo, ".openbot/bots/ci/config.md", DANGER)
    assert run_cli("trust", "ci", cwd=repo).returncode == 0
    (record,) = (openbot_home / "trust").glob("*.json")
    record.write_text('{"entries": {"bot:ci": {"sha256": 5}}}')
    damaged = run_cli("trust", "ci", cwd=repo)
    assert damaged.returncode == 2 and "not a trust record openbot wrote" in damaged.stderr
    assert len(damaged.stderr.strip().splitlines()) == 1


def test_a_repository_without_skills_needs_no_identity(repo: Path) -> None:
    # The identity runs git (twice, on a repository with past runs): a run's start pays it only when the
    # repository commits skills to look up.
    def no_identity() -> str:
        raise AssertionError("the identity was worked out")

    assert trust.repo_skills_allowed(repo, no_identity, explicit=False) == (True, "")
    (repo / ".openbot" / "skills").mkdir(parents=True)
    (repo / ".openbot" / "skills" / "s.md").write_text("---\nname: s\n---\nbody\n")
    asked: list[bool] = []

    def identity() -> str:
        asked.append(True)
        return "example.com/repo"

    allowed, why = trust.repo_skills_allowed(repo, identity, explicit=False)
    assert asked == [True] and not allowed and "not trusted" in why
