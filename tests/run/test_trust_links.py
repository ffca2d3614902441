"""Trust covers what a committed bot really loads: what lies behind its links (within the repository), read
from the checkout trust hashed; and a committed bot's files are never read through a link out of the
repository nor opened when they are not regular files (a FIFO stands in for `/proc/kmsg`: both block)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.helpers import complete, git, reply, run_cli, sessions
from tests.run.test_hostile_files import repo_for, run_as, user  # noqa: F401 (user: a fixture)

CONFIG = '+++\nmodel = "scripted:script.json"\nsleep_secs = 0\nmax_iterations = 1\n+++\nWork.\n'


def committed_bot(repo: Path, name: str = "x") -> Path:
    bot = repo / ".openbot" / "bots" / name
    bot.mkdir(parents=True)
    (bot / "config.md").write_text(CONFIG)
    (bot / "script.json").write_text(json.dumps({"responses": [reply("", complete())]}))
    return bot


def commit(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


def newest_prompt(bot: str) -> str:
    newest = max(sessions(bot), key=lambda s: (s / "system_prompt.md").stat().st_mtime_ns)
    return (newest / "system_prompt.md").read_text()


def test_a_skill_added_behind_a_symlinked_skills_dir_needs_trust_again(repo: Path) -> None:
    """The finding: `skills -> ../../../docs/cbskills` was hashed by its link text only, so a skill added
    behind it reached the system prompt of a bot trusted before."""
    bot = committed_bot(repo)
    (repo / "docs" / "cbskills").mkdir(parents=True)
    (repo / "docs" / "cbskills" / "good.md").write_text("GOOD-SKILL-BODY\n")
    (bot / "skills").symlink_to("../../../docs/cbskills")
    commit(repo, "a bot whose skills live in docs/")
    assert run_cli("trust", "x", cwd=repo).returncode == 0
    ran = run_cli("run", "x", cwd=repo)
    assert ran.returncode == 0 and "GOOD-SKILL-BODY" in newest_prompt("x"), ran.stderr
    (repo / "docs" / "cbskills" / "evil.md").write_text("EVIL-SKILL-BODY\n")
    commit(repo, "a new skill behind the link")
    proc = run_cli("run", "x", cwd=repo)
    assert proc.returncode == 2 and "changed since you trusted it" in proc.stderr, proc.stderr
    assert len(sessions("x")) == 1
    (repo / "docs" / "cbskills" / "evil.md").unlink()
    (repo / "docs" / "cbskills" / "good.md").write_text("GOOD-SKILL-BODY, edited\n")
    commit(repo, "a changed skill behind the link")
    assert "changed since you trusted it" in run_cli("run", "x", cwd=repo).stderr
    assert run_cli("trust", "x", cwd=repo).returncode == 0
    assert run_cli("run", "x", cwd=repo).returncode == 0
    assert "GOOD-SKILL-BODY, edited" in newest_prompt("x")


def test_a_config_linked_within_the_repository_is_trusted_and_a_change_behind_it_needs_trust_again(
    repo: Path,
) -> None:
    """`config.md -> ../../../common/bot.md` is read as a run reads it (links within the repository are
    fine): `openbot trust` refused it before, reading it as if only its own directory counted."""
    bot = committed_bot(repo)
    (repo / "common").mkdir()
    (bot / "config.md").rename(repo / "common" / "bot.md")
    (bot / "config.md").symlink_to("../../../common/bot.md")
    commit(repo, "a bot whose config lives in common/")
    trusted = run_cli("trust", "x", cwd=repo)
    assert trusted.returncode == 0 and "trusted bot:x" in trusted.stdout, trusted.stderr
    assert run_cli("run", "x", cwd=repo).returncode == 0
    (repo / "common" / "bot.md").write_text(CONFIG.replace("Work.", "Work harder."))
    proc = run_cli("run", "x", cwd=repo)
    assert proc.returncode == 2 and "changed since you trusted it" in proc.stderr, proc.stderr


def test_the_run_loads_the_skills_trust_hashed_not_heads(repo: Path) -> None:
    """Trust hashes the user's checkout; the run's own checkout is HEAD's tree. A skill edited (and trusted)
    in the checkout is the one that runs; HEAD's other text never reaches the prompt."""
    bot = committed_bot(repo)
    (bot / "skills").mkdir()
    (bot / "skills" / "style.md").write_text("HEAD-VERSION-OF-THE-SKILL\n")
    (repo / ".openbot" / "skills").mkdir()
    (repo / ".openbot" / "skills" / "repo.md").write_text("HEAD-VERSION-OF-THE-REPO-SKILL\n")
    commit(repo, "a bot with a skill")
    (bot / "skills" / "style.md").write_text("REVIEWED-VERSION-OF-THE-SKILL\n")
    (repo / ".openbot" / "skills" / "repo.md").write_text("REVIEWED-VERSION-OF-THE-REPO-SKILL\n")
    assert run_cli("trust", "x", cwd=repo).returncode == 0
    proc = run_cli("run", "x", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    prompt = newest_prompt("x")
    assert "REVIEWED-VERSION-OF-THE-SKILL" in prompt and "REVIEWED-VERSION-OF-THE-REPO-SKILL" in prompt
    assert "HEAD-VERSION" not in prompt


def test_a_link_in_a_committed_bot_to_a_fifo_is_refused_at_once_naming_it(
    user: list[str],  # noqa: F811
    tmp_path: Path,
) -> None:
    """`/proc/kmsg` (root) or a FIFO behind a committed link made `openbot trust` and `openbot run` block
    before trust was checked. Now neither is opened: exit 2 naming the file, also when trusted by flag."""
    repo = repo_for(user, tmp_path)
    bot, other = committed_bot(repo), committed_bot(repo, "y")
    outside = repo.parent / "outside.fifo"
    os.mkfifo(outside)
    (bot / "script.json").unlink()
    (bot / "script.json").symlink_to(outside)
    inside = repo / "inside.fifo"  # untracked, so only a link is committed: a FIFO git cannot hold
    os.mkfifo(inside)
    (other / "skills").mkdir()
    (other / "skills" / "a.md").symlink_to("../../../../inside.fifo")
    commit(repo, "a bot whose script links out of the repository, one whose skill links to a FIFO")
    for args in (["trust", "x"], ["run", "x"], ["run", "x", "--trust-repo-bots"]):
        proc = run_as(user, *args, cwd=repo, env={})
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, (args, proc.stderr)
        assert f"{bot / 'script.json'}: refused: a symlink out of the repository" in proc.stderr, proc.stderr
    for args in (["trust", "y"], ["run", "y", "--trust-repo-bots"]):
        proc = run_as(user, *args, cwd=repo, env={})
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, (args, proc.stderr)
        assert f"{other / 'skills' / 'a.md'}: refused to read: it is a FIFO" in proc.stderr, proc.stderr
    assert not sessions("x") and not sessions("y")
