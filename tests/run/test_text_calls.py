"""Tool calls a small local model writes as text, through the real CLI and the real `openai` SDK against the
loopback Chat Completions stand-in, with replies shaped as Qwen2.5-Coder-1.5B's real ones (qwen_replies)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from openbot import paths
from openbot.testing.fakeopenai import FakeOpenAI, last_user_text, reply
from tests.helpers import events, git, metadata, run_cli, sessions
from tests.run import qwen_replies as qwen

MODEL = "qwen2.5-coder-1.5b"
CAPTURE = json.loads((Path(__file__).parent / "qwen_capture.json").read_text())

# These tests are of tool calls: the work mode a local model gets by default is edits (test_edit_mode.py).
TOOLS = 'work_mode = "tools"\n'


def bot(api: FakeOpenAI, config: str = "") -> None:
    """A small model's bot; these scripts end without a commit, which is not what they test."""
    d = paths.bot_home("small")
    d.mkdir(parents=True, exist_ok=True)
    (d / "config.md").write_text(
        f'+++\nmodel = "llamacpp:{MODEL}"\nbase_url = "{api.base_url}"\nsleep_secs = 0\n'
        f"max_iterations = 1\nquestion_unchanged = false\n{TOOLS}{config}\n+++\nFix calc.py.\n"
    )


def run_small(repo: Path) -> tuple[int, dict[str, Any], str]:
    out = run_cli("run", "small", "--json", cwd=repo)
    return out.returncode, json.loads(out.stdout or "{}"), out.stderr


def calc_repo(repo: Path) -> None:
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "calc")


def of_kind(kind: str) -> list[dict[str, Any]]:
    [session] = sessions("small")
    return [e for e in events(session) if e["type"] == kind]


def notices(kind: str) -> list[dict[str, Any]]:
    return [e for e in of_kind("notice") if e["kind"] == kind]


def test_calls_written_as_text_in_every_shape_run_and_the_run_completes(repo: Path) -> None:
    calc_repo(repo)
    script = [reply(qwen.CAT_FENCED), reply(qwen.EDIT_TAGGED), reply(qwen.COMMIT_BARE)]
    script.append(reply(qwen.COMPLETE_FUNCTION))
    with FakeOpenAI(script, models={MODEL: {}}, chunk_chars=7) as api:
        bot(api)
        code, result, stderr = run_small(repo)
        bodies = api.bodies
        api.assert_done()
    assert code == 0 and result["status"] == "completed", stderr
    assert git(repo, "show", f"{result['branch']}:calc.py") == "def add(a, b):\n    return a + b"
    assert git(repo, "log", "-1", "--format=%s", result["branch"]) == "fix add"
    said = [n["data"] for n in notices("text_tool_calls")]
    assert [d["calls"] for d in said] == [["shell"], ["edit"], ["shell"], ["session_complete"]]
    assert [d["forms"] for d in said] == [["fenced"], ["tagged"], ["bare"], ["fenced"]]
    assert [c["name"] for c in of_kind("tool_call")] == ["shell", "edit", "shell", "session_complete"]
    # the result goes back as text the model reads: the file it asked for, under a plain heading (a
    # bracketed "[openbot] Your shell call (written as text):" was copied by the real model into its call)
    assert last_user_text(bodies[1]).startswith("Output of the shell call:\nexit code: 0\n")
    assert "[openbot]" not in last_user_text(bodies[1]) and "written as text" not in last_user_text(bodies[1])
    assert "return a - b" in last_user_text(bodies[1])
    assert "tools" in bodies[0]  # auto: native tools are still offered
    assert metadata(sessions("small")[0])["status"] == "completed"


def test_several_calls_in_one_reply_run_in_order(repo: Path) -> None:
    calc_repo(repo)
    script = [reply(qwen.TWO_CALLS), reply(qwen.COMPLETE_FUNCTION)]
    with FakeOpenAI(script, models={MODEL: {}}) as api:
        bot(api)
        code, result, stderr = run_small(repo)
        told = last_user_text(api.bodies[1])
        api.assert_done()
    assert code == 0, stderr
    assert [c["command"] for c in of_kind("command")] == ["cat calc.py", "git log --oneline"]
    assert told.index("return a - b") < told.index("calc")  # the cat's output, then the log's


def test_a_text_call_that_cannot_be_used_runs_nothing_and_the_model_is_told_why(repo: Path) -> None:
    calc_repo(repo)
    script = [reply(qwen.BROKEN), reply(qwen.UNKNOWN_TOOL), reply(qwen.CAT_FENCED)]
    script.append(reply(qwen.COMPLETE_FUNCTION))
    with FakeOpenAI(script, models={MODEL: {}}) as api:
        bot(api)
        code, result, stderr = run_small(repo)
        bodies = api.bodies
        api.assert_done()
    assert code == 0, stderr
    bad = [n["data"]["defect"] for n in notices("invalid_tool_input")]
    assert "not valid JSON" in bad[0] and "'read_file', which is not a tool here" in bad[1]
    assert "Nothing in it was run" in last_user_text(bodies[1])
    assert "not valid JSON" in last_user_text(bodies[1])
    assert "read_file" in last_user_text(bodies[2]) and "shell, edit" in last_user_text(bodies[2])
    assert [c["command"] for c in of_kind("command")] == ["cat calc.py"]  # only the good one ran


def test_a_reply_with_no_call_is_never_completed(repo: Path) -> None:
    calc_repo(repo)
    with FakeOpenAI([reply(qwen.PROSE_ONLY)] * 4, models={MODEL: {}}) as api:
        bot(api)
        code, result, stderr = run_small(repo)
        bodies = api.bodies
        api.assert_done()
    assert code == 3 and result["status"] == "limit", stderr  # never 0
    [session] = sessions("small")
    meta = metadata(session)
    assert meta["status"] == "limit" and "4 replies in a row called no tool" in meta["error"]
    assert len(notices("no_tool_call")) == 4  # the last one ends the session
    told = last_user_text(bodies[1])
    assert "called no tool, so nothing was run" in told and '{"name": "shell", "arguments"' in told
    assert not of_kind("command")


def test_after_a_nudge_the_model_acts_and_a_reply_without_a_call_then_ends_the_iteration(repo: Path) -> None:
    calc_repo(repo)
    script = [reply(qwen.PROSE_ONLY), reply(qwen.CAT_FENCED), reply("The bug is in add().")]
    with FakeOpenAI(script, models={MODEL: {}}) as api:
        bot(api)
        code, result, stderr = run_small(repo)
        api.assert_done()
    assert code == 3, stderr  # one iteration, no session_complete: the limit, not success
    assert len(notices("no_tool_call")) == 1
    assert [c["command"] for c in of_kind("command")] == ["cat calc.py"]


def test_the_text_protocol_sends_no_tools_and_describes_them_in_the_prompt(repo: Path) -> None:
    calc_repo(repo)
    script = [reply(qwen.CAT_FENCED), reply(qwen.COMPLETE_FUNCTION)]
    with FakeOpenAI(script, models={MODEL: {}}) as api:
        bot(api, 'tool_protocol = "text"')
        code, result, stderr = run_small(repo)
        bodies = api.bodies
        api.assert_done()
    assert code == 0, stderr
    assert all("tools" not in b for b in bodies)
    system = bodies[0]["messages"][0]["content"]
    assert "# Tools: how to call them" in system and "## session_complete" in system
    assert '- `command` ("view" | "create" | "str_replace" | "insert", required)' in system


def test_the_native_protocol_does_not_run_calls_written_as_text(repo: Path) -> None:
    calc_repo(repo)
    with FakeOpenAI([reply(qwen.CAT_FENCED)] * 4, models={MODEL: {}}) as api:
        bot(api, 'tool_protocol = "native"')
        code, result, stderr = run_small(repo)
        told = last_user_text(api.bodies[1])
        api.assert_done()
    assert code == 3, stderr
    assert not of_kind("command") and not notices("text_tool_calls")
    assert "called no tool" in told and "```json" not in told  # native: not taught the text format


def test_an_unknown_tool_protocol_is_a_config_error(repo: Path) -> None:
    with FakeOpenAI([], models={MODEL: {}}) as api:
        bot(api, 'tool_protocol = "json"')
        out = run_cli("run", "small", cwd=repo)
    assert out.returncode == 2
    assert "tool_protocol" in out.stderr and "native" in out.stderr and "Traceback" not in out.stderr


@pytest.mark.parametrize(
    ("run", "config", "ending"),
    [
        # max_repeats = 5: the limit the real runs had (a small model's default is now 3)
        ("run1", "max_turn_steps = 5\nmax_repeats = 5", "reached max_turn_steps (5)"),
        (
            "run2",
            'tool_protocol = "text"\ntools = ["shell", "edit"]\nmax_turn_steps = 6\nmax_repeats = 5',
            "repeated 5 times",
        ),
    ],
)
def test_the_real_models_replies_replayed_go_as_they_went_on_the_real_server(
    repo: Path, run: str, config: str, ending: str
) -> None:
    calls = CAPTURE["runs"][run]  # captured from llama-server: tests/run/qwen_capture.json
    calc_repo(repo)
    with FakeOpenAI([reply(c["text"]) for c in calls], models={MODEL: {}}) as api:
        bot(api, config)
        code, result, stderr = run_small(repo)
        bodies = api.bodies
        api.assert_done()
    assert code == 3, stderr  # the model never fixed the bug: never reported as success
    # the same requests as the real run: as many messages, tools sent (auto) or not (text)
    assert [len(b["messages"]) for b in bodies] == [c["messages_sent"] for c in calls]
    assert ["tools" in b for b in bodies] == [c["tools_sent"] for c in calls]
    commands = [
        json.loads(c["text"].split("```json")[1].split("```")[0])["arguments"]["command"] for c in calls[-4:]
    ]
    ran = [c for i, c in enumerate(commands) if i == 0 or c != commands[i - 1]]  # a repeat is not run again
    assert [c["command"] for c in of_kind("command")][-len(ran) :] == ran
    assert len(notices("no_tool_call")) == sum("```json" not in c["text"] for c in calls)
    meta = metadata(sessions("small")[0])
    assert ending in meta["error"] and "```json" not in meta["response_summary"]  # a call is no summary
