"""Bots and skills committed in a repository run only once trusted; a committed bot never silently
replaces the user's own; the agent cannot escalate itself by committing a bot config."""

from __future__ import annotations

import json
from pathlib import Path

from openbot import paths
from tests.helpers import complete, git, make_bot, reply, run_cli, sessions, shell

DANGER = 'sandbox = "danger-full-access"\nnetwork = true\n'


def commit_bot(repo: Path, name: str, responses: list[dict], config: str = "") -> Path:
    """A scripted bot committed under `.openbot/bots/<name>/` (config and script)."""
    bot_dir = repo / ".openbot" / "bots" / name
    bot_dir.mkdir(parents=True, exist_ok=True)
    (bot_dir / "script.json").write_text(json.dumps({"responses": responses}))
    (bot_dir / "config.md").write_text(
        f'+++\nmodel = "scripted:script.json"\nsleep_secs = 0\n{config}+++\nWork.\n'
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", f"bot {name}")
    return bot_dir / "config.md"


def nothing_created(repo: Path, bot: str) -> bool:
    return not sessions(bot) and not git(repo, "branch", "--list", "openbot/*")


def test_an_untrusted_committed_bot_refuses_to_run_and_says_how_to_trust_it(repo: Path) -> None:
    commit_bot(repo, "ci", [reply("", complete())], DANGER)
    proc = run_cli("run", "ci", cwd=repo)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert "bot 'ci' is committed in this repository" in line and "not trusted yet" in line
    assert 'sandbox "danger-full-access", network on' in line and "`openbot trust ci`" in line
    assert nothing_created(repo, "ci")
    assert run_cli("trust", "ci", cwd=repo).returncode == 0
    proc = run_cli("run", "ci", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    first = proc.stderr.lstrip().splitlines()[0]
    assert "using the bot committed in this repository" in first and "openbot trust ci" in first


def test_a_changed_committed_config_needs_trust_again(repo: Path) -> None:
    config = commit_bot(repo, "ci", [reply("", complete())])
    assert run_cli("trust", "ci", cwd=repo).returncode == 0
    config.write_text(config.read_text().replace("sleep_secs = 0", f"sleep_secs = 0\n{DANGER}"))
    proc = run_cli("run", "ci", cwd=repo)
    assert proc.returncode == 2 and "changed since you trusted it" in proc.stderr, proc.stderr
    assert nothing_created(repo, "ci")


def test_ci_trusts_explicitly_by_flag_or_environment(repo: Path) -> None:
    commit_bot(repo, "ci", [reply("", complete())])
    by_flag = run_cli("run", "ci", "--trust-repo-bots", cwd=repo)
    assert by_flag.returncode == 0 and "--trust-repo-bots" in by_flag.stderr, by_flag.stderr
    by_env = run_cli("run", "ci", cwd=repo, env={"OPENBOT_TRUST_REPO_BOTS": "1"})
    assert by_env.returncode == 0, by_env.stderr
    assert run_cli("run", "ci", cwd=repo, env={"OPENBOT_TRUST_REPO_BOTS": "0"}).returncode == 2


def test_the_agent_cannot_escalate_by_committing_its_own_config(repo: Path) -> None:
    """The issue's attack: the agent commits `.openbot/bots/<bot>/config.md` asking for
    danger-full-access and merges it; the next run of a trusted committed bot refuses."""
    evil = '+++\\nmodel = "scripted:script.json"\\nsandbox = "danger-full-access"\\n+++\\nOwn it.\\n'
    responses = [
        reply("", shell(f"printf '{evil}' > .openbot/bots/ci/config.md && git commit -qam escalate")),
        reply("", complete("done", "merge")),
    ]
    commit_bot(repo, "ci", responses, "merge_unverified = true\n")
    assert run_cli("trust", "ci", cwd=repo).returncode == 0
    proc = run_cli("run", "ci", "--json", cwd=repo)
    assert proc.returncode == 0 and json.loads(proc.stdout)["action"] == "merge", proc.stderr
    assert "danger-full-access" in (repo / ".openbot/bots/ci/config.md").read_text()  # merged into main
    again = run_cli("run", "ci", cwd=repo)
    assert again.returncode == 2 and "changed since you trusted it" in again.stderr
    assert 'sandbox "danger-full-access"' in again.stderr and len(sessions("ci")) == 1


def test_a_committed_bot_never_silently_replaces_the_users_own(repo: Path) -> None:
    make_bot("fixer", [reply("", complete("home bot ran"))])
    committed = commit_bot(repo, "fixer", [reply("", complete("repo bot ran"))], DANGER)
    proc = run_cli("run", "fixer", "--json", cwd=repo, env={"OPENBOT_TRUST_REPO_BOTS": "1"})
    assert proc.returncode == 0 and json.loads(proc.stdout)["summary"] == "home bot ran", proc.stderr
    first = proc.stderr.lstrip().splitlines()[0]
    assert "using your bot 'fixer'" in first and str(committed) in first and "--bot-source repo" in first
    picked = run_cli("run", "fixer", "--bot-source", "repo", "--json", cwd=repo)
    assert picked.returncode == 2 and "not trusted yet" in picked.stderr
    assert run_cli("trust", "fixer", cwd=repo).returncode == 0
    picked = run_cli("run", "fixer", "--bot-source", "repo", "--json", cwd=repo)
    assert picked.returncode == 0 and json.loads(picked.stdout)["summary"] == "repo bot ran", picked.stderr


def system_prompt(bot: str) -> str:
    """The system prompt of the bot's newest session, in whichever project it ran."""
    newest = max(sessions(bot), key=lambda s: (s / "system_prompt.md").stat().st_mtime_ns)
    return (newest / "system_prompt.md").read_text()


def test_repo_skills_reach_a_prompt_only_in_their_repo_and_only_once_trusted(
    repo: Path, tmp_path: Path
) -> None:
    skill = repo / ".openbot" / "skills" / "planted.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\ndescription: planted\n---\nPLANTED-SKILL-BODY\n")
    committed_skill = repo / ".openbot" / "bots" / "fixer" / "skills" / "theirs.md"
    committed_skill.parent.mkdir(parents=True)
    committed_skill.write_text("COMMITTED-BOT-SKILL\n")
    commit_bot(repo, "fixer", [reply("", complete())])
    make_bot("fixer", [reply("", complete())] * 3, config="max_iterations = 1")
    proc = run_cli("run", "fixer", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert "skipped the repository's skills" in proc.stderr
    assert "PLANTED-SKILL-BODY" not in system_prompt("fixer")
    assert "COMMITTED-BOT-SKILL" not in system_prompt("fixer")  # the home bot ran, not the committed one
    assert run_cli("trust", cwd=repo).returncode == 0
    assert run_cli("run", "fixer", cwd=repo).returncode == 0
    assert "PLANTED-SKILL-BODY" in system_prompt("fixer")
    assert "COMMITTED-BOT-SKILL" not in system_prompt("fixer")
    other = tmp_path / "other"
    git(tmp_path, "init", "-q", "-b", "main", str(other))
    git(other, "commit", "-q", "--allow-empty", "-m", "init")
    assert run_cli("run", "fixer", cwd=other).returncode == 0
    assert "PLANTED-SKILL-BODY" not in system_prompt("fixer")
    assert not list(paths.bot_skills_dir("fixer").glob("*"))  # nothing was copied into the home bot
