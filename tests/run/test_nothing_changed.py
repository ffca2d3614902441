"""A session_complete with nothing changed in the repository is questioned once; confirmed, the run ends
`completed` with `nothing_changed: true`, said in the end line, --json, history and the notification."""

from __future__ import annotations

import json
from pathlib import Path

from openbot import paths
from tests.helpers import complete, events, git, make_bot, reply, run_cli, sessions, shell

ASKING = "question_unchanged = true\nmax_iterations = 1"


def memory_set(value: str) -> dict[str, object]:
    return {"name": "memory", "input": {"action": "set", "key": "answer", "value": value}}


def user_texts(bot: str) -> list[str]:
    (path,) = paths.bot_home(bot).glob("workspaces/*/runs/*/conversation.jsonl")
    return [line for line in path.read_text().split("\n") if "Memory is not the repository" in line]


def test_a_completion_with_nothing_changed_is_questioned_once_then_said_everywhere(
    repo: Path, tmp_path: Path
) -> None:
    told = tmp_path / "told.json"
    notify = f'sleep_secs = 0\n[[notify]]\ncommand = ["sh", "-c", "cat > \'{told}\'"]'
    script = [
        reply("", memory_set("42")),
        reply("", complete("The answer is 42 (saved in memory).")),
        reply("", complete("No change is needed: the answer is only to be reported.")),
    ]
    make_bot("idle", script, config=f"{ASKING}\n{notify}")
    out = run_cli("run", "idle", "--json", cwd=repo)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["status"] == "completed" and result["nothing_changed"] is True
    assert "completed: nothing changed in the repository" in out.stderr
    [session] = sessions("idle")
    said = [e for e in events(session) if e["type"] == "notice" and e["kind"] == "nothing_changed"]
    assert [e["data"] for e in said] == [
        {"questioned": True, "final": False},
        {"questioned": True, "final": True},
    ]
    assert len(user_texts("idle")) == 1  # questioned once, not again
    listed = run_cli("history", "idle", cwd=repo)
    assert "[nothing changed in the repository]" in listed.stdout
    assert "completed: nothing changed in the repository" in json.loads(told.read_text())["text"]


def test_a_bot_that_makes_the_change_after_the_question_completes_as_usual(repo: Path) -> None:
    script = [
        reply("", complete("Done (in memory).")),
        reply("", shell("echo 42 > ANSWER && git add ANSWER && git commit -qm answer")),
        reply("", complete("Wrote ANSWER.")),
    ]
    make_bot("fixes", script, config=ASKING)
    out = run_cli("run", "fixes", "--json", cwd=repo)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["status"] == "completed" and result["nothing_changed"] is False
    assert git(repo, "show", f"{result['branch']}:ANSWER") == "42"
    assert "nothing changed" not in out.stderr.split("openbot: run")[-1]
    assert "[nothing changed" not in run_cli("history", "fixes", cwd=repo).stdout


def test_discard_is_not_questioned_and_a_scripted_model_is_not_by_default(repo: Path) -> None:
    make_bot("drop", [reply("", complete("nothing to keep", "discard"))], config=ASKING)
    dropped = run_cli("run", "drop", "--json", cwd=repo)
    assert dropped.returncode == 0, dropped.stderr
    assert json.loads(dropped.stdout)["nothing_changed"] is False
    make_bot("plain", [reply("", complete("looked, nothing to do"))], config="max_iterations = 1")
    plain = run_cli("run", "plain", "--json", cwd=repo)
    assert plain.returncode == 0, plain.stderr  # one reply: not asked again
    assert json.loads(plain.stdout)["nothing_changed"] is True
    assert "completed: nothing changed in the repository" in plain.stderr


def test_a_completion_its_verify_commands_refuse_is_told_what_failed_not_questioned(repo: Path) -> None:
    """Nothing changed and the check fails: what failed says what to change, so the bot is told that,
    and the nothing-changed question (for work the check passed) is not put on top of it."""
    script = [
        reply("", complete("Done (in memory).")),
        reply("", shell("echo 42 > ANSWER && git add ANSWER && git commit -qm answer")),
        reply("", complete("Wrote ANSWER.")),
    ]
    make_bot("checked", script, config=f'{ASKING}\nverify = ["test -f ANSWER"]')
    out = run_cli("run", "checked", "--json", cwd=repo)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert (
        result["status"] == "completed" and result["verified"] is True and not result.get("nothing_changed")
    )
    assert user_texts("checked") == []  # never questioned
    [session] = sessions("checked")
    checks = [e for e in events(session) if e["type"] == "verification"]
    assert [c["passed"] for c in checks] == [False, True]  # the first completion was told what failed
    assert not [e for e in events(session) if e["type"] == "notice" and e["kind"] == "nothing_changed"]
