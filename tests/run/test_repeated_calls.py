"""A repeated identical call is answered from its known result with a direction, not run again; the turn
ends `stuck` at max_repeats naming the call that did not help; a small model's limit is lower."""

from __future__ import annotations

import json
from pathlib import Path

from openbot import paths
from tests.helpers import complete, events, git, make_bot, metadata, reply, run_cli, sessions, shell

COUNTING = "echo ran >> count.txt; wc -l < count.txt"


def conversation(bot: str) -> list[dict]:
    (path,) = paths.bot_home(bot).glob("workspaces/*/runs/*/conversation.jsonl")
    return [json.loads(line) for line in path.read_text().split("\n") if line]


def tool_results(bot: str) -> list[str]:
    found = []
    for record in conversation(bot):
        message = record.get("message", record)
        for block in message.get("content", []) if isinstance(message.get("content"), list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                found.append(str(block["content"]))
    return found


def test_the_same_command_five_times_runs_once_and_is_answered_from_its_result(repo: Path) -> None:
    script = [reply("", shell(COUNTING)) for _ in range(5)]
    script += [reply("", shell("cat count.txt")), reply("", complete("counted", "review"))]
    make_bot("rep", script, config="max_iterations = 2")
    out = run_cli("run", "rep", "--json", cwd=repo)
    first, _ = sessions("rep")
    kinds = [e for e in events(first) if e["type"] == "notice" and e["kind"] == "repeated_call"]
    commands = [e["command"] for e in events(first) if e["type"] == "command"]
    results = tool_results("rep")
    meta = metadata(first)
    assert commands == [COUNTING]  # ran once; four repeats answered from its result
    assert [k["data"]["repeats"] for k in kinds] == [2, 3, 4, 5]
    assert results[0] == "exit code: 0\n1\n"
    for later in results[1:5]:
        assert "Not run again" in later and "exit code: 0\n1\n" in later and "do something different" in later
    assert meta["status"] == "limit" and "repeated 5 times and did not help" in meta["error"]
    assert COUNTING in meta["error"]  # the next iteration hears what was repeated, and that it did not help
    prompts = [m for m in map(json.dumps, conversation("rep")) if "# Recent sessions" in m]
    assert len(prompts) == 2 and "did not help" in prompts[1] and "do something different" in prompts[1]
    assert out.returncode == 0, out.stderr
    branch = json.loads(out.stdout)["branch"]
    assert git(repo, "show", f"{branch}:count.txt") == "ran"  # iteration 2's cat saw one line, WIP-committed


def test_a_typed_line_or_another_call_between_makes_the_repeat_run(repo: Path) -> None:
    script = [reply("", shell(COUNTING)), reply("", shell("true")), reply("", shell(COUNTING))]
    make_bot("alt", [*script, reply("", complete())], config="max_iterations = 1")
    out = run_cli("run", "alt", cwd=repo)
    assert out.returncode == 0, out.stderr
    commands = [e["command"] for e in events(sessions("alt")[0]) if e["type"] == "command"]
    assert commands == [COUNTING, "true", COUNTING]


def test_session_complete_repeated_is_never_answered_from_memory(repo: Path) -> None:
    make_bot("done", [reply("", complete()), reply("", complete())], config="max_iterations = 1")
    out = run_cli("run", "done", "--json", cwd=repo)
    assert out.returncode == 0, out.stderr
    assert not [e for e in events(sessions("done")[0]) if e.get("kind") == "repeated_call"]


def write_bot(name: str, front: str) -> None:
    bot_dir = paths.bot_home(name)
    bot_dir.mkdir(parents=True, exist_ok=True)
    (bot_dir / "config.md").write_text(f"+++\n{front}\n+++\n\nWork.\n")


def test_a_small_model_gets_a_lower_repeat_limit_unless_its_config_sets_one(repo: Path) -> None:
    write_bot("small", 'model = "llamacpp:qwen2.5-coder-1.5b"')
    write_bot("told", 'model = "llamacpp:qwen2.5-coder-1.5b"\nmax_repeats = 6')
    write_bot("claude", 'model = "claude-sonnet-5-5"')
    shown = {}
    for name in ("small", "told", "claude"):
        out = run_cli("bots", "show", name, "--json", cwd=repo)
        assert out.returncode == 0, out.stderr
        shown[name] = json.loads(out.stdout)
    assert shown["small"]["config"]["max_repeats"] == 3 and shown["small"]["set_by_model"] == [
        "max_repeats",
        "question_unchanged",
    ]
    assert shown["told"]["config"]["max_repeats"] == 6 and shown["told"]["set_by_model"] == [
        "question_unchanged"
    ]
    assert shown["claude"]["config"]["max_repeats"] == 5 and shown["claude"]["set_by_model"] == []
    text = run_cli("bots", "show", "small", cwd=repo).stdout
    assert any(line.split()[:4] == ["max_repeats", "=", "3", "model"] for line in text.splitlines())
