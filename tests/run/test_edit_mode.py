"""work_mode "edits" through the real CLI: the model writes files in its reply, openbot applies them through
the edit tool (the sandbox's write rule holds), commits them, runs the bot's check and sends its failures
back; `auto` picks it for local servers, and `work_mode = "tools"` keeps tool calls (docs/MODELS.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from openbot import paths
from openbot.testing.fakeopenai import FakeOpenAI, Reply, last_user_text, reply
from tests.helpers import events, git, make_bot, make_repo, run_cli, sessions

EDITS = 'work_mode = "edits"\nmax_iterations = 1'
CHECK = "verify = [\"python3 -c 'import config, sys; sys.exit(0 if config.X == 5 else 1)'\"]"
MODEL = "qwen2.5-coder-1.5b"


def text(said: str) -> dict[str, Any]:
    return {"text": said}


def branch_of(repo: Path) -> str:
    return git(repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/openbot/")


def show(repo: Path, what: str) -> str:
    return git(repo, "show", f"{branch_of(repo)}:{what}")


def project(tmp_path: Path) -> Path:
    return make_repo(
        tmp_path / "proj", {"config.py": "X = 1\nY = 2\n", "pkg/util.py": "def f():\n    return 1\n"}
    )


def checked_project(tmp_path: Path) -> Path:
    """config.py and a test that wants its X to be 5 (`python3 test_config.py`)."""
    return make_repo(
        tmp_path / "proj",
        {"config.py": "X = 1\nY = 2\n", "test_config.py": "import config\n\nassert config.X == 5\n"},
    )


def config_reply(x: int, before: str = "") -> Reply:
    """A reply that writes config.py whole with X = `x`, after the words `before`."""
    return reply(f"{before}config.py\n```python\nX = {x}\nY = 2\n```\n")


def test_a_whole_file_in_the_reply_is_written_and_committed_with_the_replys_first_line(
    tmp_path: Path,
) -> None:
    repo = project(tmp_path)
    make_bot("e", [text("Set X to 5.\n\nconfig.py\n```python\nX = 5\nY = 2\n```\n"), text("DONE")], EDITS)
    out = run_cli("run", "e", cwd=repo)
    assert out.returncode == 0, out.stderr
    assert show(repo, "config.py") == "X = 5\nY = 2"
    assert git(repo, "log", "-1", "--format=%s", branch_of(repo)) == "Set X to 5."
    assert 'work mode: edits (work_mode = "edits" in the config)' in out.stderr


def test_a_search_replace_block_is_applied_and_committed(tmp_path: Path) -> None:
    repo = project(tmp_path)
    said = "Return 2.\n\npkg/util.py\n<<<<<<< SEARCH\n    return 1\n=======\n    return 2\n>>>>>>> REPLACE\n"
    make_bot("e", [text(said), text("DONE")], EDITS)
    out = run_cli("run", "e", cwd=repo)
    assert out.returncode == 0, out.stderr
    assert show(repo, "pkg/util.py") == "def f():\n    return 2"
    assert git(repo, "log", "-1", "--format=%s", branch_of(repo)) == "Return 2."


def test_a_path_to_slip_lands_on_the_file_in_the_chat(tmp_path: Path) -> None:
    repo = project(tmp_path)
    said = "Fix.\n\npath/to/util.py\n```python\ndef f():\n    return 3\n```\n"
    make_bot("e", [text(said), text("DONE")], EDITS, instructions="Make f in pkg/util.py return 3.")
    out = run_cli("run", "e", cwd=repo)
    assert out.returncode == 0, out.stderr
    assert show(repo, "pkg/util.py") == "def f():\n    return 3"
    tree = git(repo, "ls-tree", "-r", "--name-only", branch_of(repo)).split()
    assert sorted(tree) == ["config.py", "pkg/util.py"]  # no path/to/ directory


def test_an_edit_the_sandbox_does_not_allow_is_refused_and_said(tmp_path: Path) -> None:
    repo = project(tmp_path)
    outside = tmp_path / "escape.txt"
    hook = ".git/hooks/pre-commit"
    said = f"Write.\n\n../escape.txt\n```\nowned\n```\n\n{outside}\n```\nowned\n```\n\n{hook}\n```\nx\n```\n"
    make_bot("e", [text(said), text("DONE"), text("DONE")], EDITS)
    out = run_cli("run", "e", cwd=repo)
    assert not outside.exists() and not (repo / hook).exists()
    [session] = sessions("e")
    results = [e for e in events(session) if e["type"] == "tool_result" and e["name"] == "edit"]
    assert [r["is_error"] for r in results] == [True, True, True]
    assert all("outside the working directory" in r["content"] for r in results[:2])
    assert "one of git's own files (.git)" in results[2]["content"]
    assert branch_of(repo) == "", out.stderr  # nothing was committed


def test_a_read_only_sandbox_refuses_the_edit(tmp_path: Path) -> None:
    repo = project(tmp_path)
    make_bot(
        "e", [text("X.\n\nconfig.py\n```\nX = 5\n```\n"), text("DONE")], EDITS + '\nsandbox = "read-only"'
    )
    run_cli("run", "e", cwd=repo)
    [session] = sessions("e")
    [result] = [e for e in events(session) if e["type"] == "tool_result" and e["name"] == "edit"]
    assert result["is_error"] and "'read-only' sandbox forbids writing config.py" in result["content"]


def local_bot(base_url: str, config: str = "") -> None:
    d = paths.bot_home("small")
    d.mkdir(parents=True, exist_ok=True)
    (d / "config.md").write_text(
        f'+++\nmodel = "llamacpp:{MODEL}"\nbase_url = "{base_url}"\nsleep_secs = 0\nmax_iterations = 1\n'
        f"{config}\n+++\nChange the constant X in config.py to 5.\n"
    )


def test_a_local_model_works_in_edits_by_default_and_a_failing_check_reaches_the_next_request(
    tmp_path: Path,
) -> None:
    repo = project(tmp_path)
    wrong = reply(
        "Set X.\n\nconfig.py\n```python\nX = 4  # same size, same second: a stale .pyc\nY = 2\n```\n"
    )
    right = reply("Now 5.\n\nconfig.py\n```python\nX = 5\nY = 2\n```\n")
    with FakeOpenAI([wrong, right], models={MODEL: {}}) as api:
        local_bot(api.base_url, CHECK)
        out = run_cli("run", "small", cwd=repo)
        bodies = api.bodies
    assert out.returncode == 0, out.stderr
    assert "work mode: edits (auto: llamacpp: is a local or OpenAI-compatible server)" in out.stderr
    assert len(bodies) == 2 and all("tools" not in b for b in bodies)
    first, second = last_user_text(bodies[0]), last_user_text(bodies[1])
    assert (
        "config.py\n```python\nX = 1\nY = 2\n```" in first
    )  # the file the task names, in front of the model
    assert "the check `python3 -c" in second and "failed (exit code: 1)" in second
    assert show(repo, "config.py") == "X = 5\nY = 2"


def test_work_mode_tools_on_a_local_model_keeps_tool_calls(tmp_path: Path) -> None:
    repo = project(tmp_path)
    done = {"name": "session_complete", "input": {"summary": "nothing", "action": "review"}}
    with FakeOpenAI([reply("", [done]), reply("", [done])], models={MODEL: {}}) as api:  # asked, confirmed
        local_bot(api.base_url, 'work_mode = "tools"')
        out = run_cli("run", "small", cwd=repo)
        body = api.bodies[0]
    assert out.returncode == 0, out.stderr
    assert 'work mode: tools (work_mode = "tools" in the config)' in out.stderr
    assert {t["function"]["name"] for t in body["tools"]} >= {"shell", "edit", "session_complete"}


def test_bots_show_says_the_mode_and_why_and_the_smaller_prompt(tmp_path: Path) -> None:
    repo = project(tmp_path)
    local_bot("http://127.0.0.1:9/v1")
    shown = run_cli("bots", "show", "small", cwd=repo)
    assert "work mode: edits (auto: llamacpp: is a local or OpenAI-compatible server)" in shown.stdout
    edits = json.loads(run_cli("bots", "show", "small", "--json", cwd=repo).stdout)
    local_bot("http://127.0.0.1:9/v1", 'tool_protocol = "text"')
    tools = json.loads(run_cli("bots", "show", "small", "--json", cwd=repo).stdout)
    assert edits["work_mode"]["mode"] == "edits" and tools["work_mode"] == {
        "mode": "tools",
        "why": "auto: tool_protocol set in the config",
    }
    assert edits["prompt_tokens"]["tools"] == 0 and edits["prompt_tokens"]["system"] < 400
    assert tools["prompt_tokens"]["system"] > 1000


def conversation_texts(bot: str) -> list[str]:
    [path] = paths.bot_home(bot).glob("workspaces/*/runs/*/conversation.jsonl")
    said = []
    for line in path.read_text().splitlines():
        message = json.loads(line).get("message") or {}
        said += [b.get("text", "") for b in message.get("content", []) if isinstance(b, dict)]
    return said


def test_a_whole_file_that_drops_most_of_the_old_one_is_said_before_done_is_taken(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path / "proj", {".gitignore": "__pycache__/\n*.pyc\n.venv/\n", "main.py": "print(1)\n"}
    )
    most_gone = text("Ignore build.\n\n.gitignore\n```\n*.pyc\nbuild/\n```\nDONE\n")
    whole = text("Keep them.\n\n.gitignore\n```\n__pycache__/\n*.pyc\n.venv/\nbuild/\n```\n")
    make_bot("e", [most_gone, whole, text("DONE")], EDITS, instructions="Add build/ to .gitignore.")
    out = run_cli("run", "e", cwd=repo)
    assert out.returncode == 0, out.stderr
    assert show(repo, ".gitignore") == "__pycache__/\n*.pyc\n.venv/\nbuild/"
    told = [t for t in conversation_texts("e") if "2 of its 3 lines are gone" in t]
    assert len(told) == 1 and "`__pycache__/`, `.venv/`" in told[0] and "Send that file again" in told[0]
    assert "send it whole, as:\n.gitignore\n```\n__pycache__/\n*.pyc\n.venv/\n*.pyc\nbuild/\n```" in told[0]


def test_a_new_file_the_task_names_is_listed_and_a_slip_in_its_name_lands_on_it(tmp_path: Path) -> None:
    repo = project(tmp_path)
    task = "Create a file named AUTHORS whose only line is: Ada Lovelace"
    make_bot(
        "e", [text("authors.md\n```markdown\nAda Lovelace\n```\n"), text("DONE")], EDITS, instructions=task
    )
    out = run_cli("run", "e", cwd=repo)
    assert out.returncode == 0, out.stderr
    assert show(repo, "AUTHORS") == "Ada Lovelace"
    assert any("Not in the repository yet (the task names it): AUTHORS" in t for t in conversation_texts("e"))


def test_a_reply_with_no_edit_is_told_the_format_once_and_a_second_ends_the_session(tmp_path: Path) -> None:
    repo = project(tmp_path)
    make_bot("e", [text("I will look into it."), text("Let me think about it.")], EDITS)
    out = run_cli("run", "e", cwd=repo)
    assert out.returncode == 3, out.stderr  # max_iterations reached, never a silent exit 0
    [session] = sessions("e")
    ended = [e for e in events(session) if e["type"] == "session_ended"][-1]
    assert ended["status"] == "limit" and "two replies in a row held no edit" in ended["reason"]
    told = [t for t in conversation_texts("e") if "held no edit and no command" in t]
    assert len(told) == 1 and "calc.py\n```python\ndef add(a, b):" in told[0]


def test_done_with_nothing_changed_is_questioned_in_the_edits_words(tmp_path: Path) -> None:
    repo = project(tmp_path)
    make_bot(
        "e",
        [text("DONE"), text("DONE"), text("DONE: X is already right.")],
        EDITS + "\nquestion_unchanged = true",
    )
    out = run_cli("run", "e", cwd=repo)
    assert out.returncode == 0 and "completed: nothing changed in the repository" in out.stderr, out.stderr
    said = conversation_texts("e")
    assert sum("You said DONE, but no file has changed yet" in t for t in said) == 1
    assert sum("DONE was not accepted yet: nothing in the repository changed" in t for t in said) == 1
    assert not any("session_complete" in t for t in said)


def test_the_check_runs_once_before_the_first_request_and_its_failure_is_in_the_first_message(
    tmp_path: Path,
) -> None:
    """A small model told only the task guessed at the file and the fix; the check's failure before any
    change says what fails and where (a commit message as the task: "Support user_function ...")."""
    repo = make_repo(
        tmp_path / "proj",
        {
            "config.py": "X = 1\nY = 2\n",
            "test_config.py": "import config\n\nassert config.X == 5, f'X is {config.X}, want 5'\n",
        },
    )
    right = reply("Set X to 5.\n\nconfig.py\n```python\nX = 5\nY = 2\n```\n")
    with FakeOpenAI([right], models={MODEL: {}}) as api:
        local_bot(api.base_url, 'verify = ["python3 test_config.py"]')
        out = run_cli("run", "small", cwd=repo)
        first = last_user_text(api.bodies[0])
    assert out.returncode == 0, out.stderr
    assert "Before any change, the check `python3 test_config.py` failed (exit code: 1)" in first
    assert "The error: `AssertionError: X is 1, want 5`" in first
    assert "It points at test_config.py line 3:" in first  # the line, shown with its neighbours
    assert first.index("Before any change") < first.index("# Task")  # the task stays last
    [session] = sessions("small")
    calls = [e for e in events(session) if e.get("type") == "tool_call"]
    assert [c["id"] for c in calls][:1] == ["check_0_1"]  # on the record, as each check after an edit


def test_a_check_that_passes_before_any_change_adds_nothing_to_the_first_message(tmp_path: Path) -> None:
    repo = project(tmp_path)
    right = reply("Set X to 5.\n\nconfig.py\n```python\nX = 5\nY = 2\n```\n")
    with FakeOpenAI([right], models={MODEL: {}}) as api:
        local_bot(api.base_url, 'verify = ["true"]')
        out = run_cli("run", "small", cwd=repo)
        first = last_user_text(api.bodies[0])
    assert out.returncode == 0, out.stderr
    assert "Before any change" not in first and "# Check\n" in first


def test_a_whole_file_that_drops_the_old_lines_is_asked_about_even_when_the_check_passes(
    tmp_path: Path,
) -> None:
    """The 1.5B model answered 'add slugify' with a textutil.py holding only slugify: the check (the new
    function's test) passed and the run ended verified with shout() gone."""
    repo = make_repo(
        tmp_path / "proj",
        {
            "textutil.py": 'def shout(text):\n    return text.upper() + "!"\n',
            "test_textutil.py": "from textutil import slugify\n\nassert slugify('A b') == 'a-b'\n",
        },
    )
    slug = 'def slugify(text):\n    return "-".join(word.lower() for word in text.split())\n'
    only = reply(f"Add slugify.\n\ntextutil.py\n```python\n{slug}```\n")
    both = reply(
        f'Both.\n\ntextutil.py\n```python\ndef shout(text):\n    return text.upper() + "!"\n\n\n{slug}```\n'
    )
    with FakeOpenAI([only, both], models={MODEL: {}}) as api:
        local_bot(api.base_url, 'verify = ["python3 test_textutil.py"]')
        out = run_cli("run", "small", cwd=repo)
        second = last_user_text(api.bodies[1]) if len(api.bodies) > 1 else ""
    assert out.returncode == 0, out.stderr
    assert "2 of its 2 lines are gone" in second and "Send that file again" in second
    assert "def shout(text):" in show(repo, "textutil.py") and "def slugify" in show(repo, "textutil.py")


def test_a_file_sent_back_unchanged_is_told_the_checks_failure_again_and_what_to_do(tmp_path: Path) -> None:
    """A 1.5B model given a failing check sent the unchanged 140-line cachetools/func.py back five times;
    "already so, nothing to change" told it nothing it could act on, and the same context got the same
    reply."""
    repo = make_repo(
        tmp_path / "proj",
        {
            "config.py": "X = 1\nY = 2\n",
            "test_config.py": "import config\n\nassert config.X == 5, f'X is {config.X}, want 5'\n",
        },
    )
    same = reply("Here.\n\nconfig.py\n```python\nX = 1\nY = 2\n```\n")
    right = reply("Set X.\n\nconfig.py\n<<<<<<< SEARCH\nX = 1\n=======\nX = 5\n>>>>>>> REPLACE\n")
    with FakeOpenAI([same, right], models={MODEL: {}}) as api:
        local_bot(api.base_url, 'verify = ["python3 test_config.py"]')
        out = run_cli("run", "small", cwd=repo)
        second = last_user_text(api.bodies[1])
    assert out.returncode == 0, out.stderr
    assert "config.py: already so, nothing to change" in second
    assert "What you sent is the file as it is now: nothing changed, and the check still fails." in second
    assert "The error: `AssertionError: X is 1, want 5`" in second and "<<<<<<< SEARCH" in second
    assert show(repo, "config.py") == "X = 5\nY = 2"


TIMES = '''"""Times."""
from decimal import Decimal

LIMIT = 10


def parse_time(text):
    """The microseconds of `text`, rounded."""
    second = Decimal(text).quantize(Decimal(".000001"))
    return int((second - int(second)) * 1000000)


def shout(text):
    return text.upper()
'''
TIMES_TEST = """import unittest

from times import parse_time


class T(unittest.TestCase):
    def test_round_down(self):
        got = parse_time("1.1234567")
        self.assertEqual(got, 123456)


unittest.main()
"""


def test_the_function_a_failing_test_calls_is_in_the_first_message(tmp_path: Path) -> None:
    """isodate 89f80896e0: the check's failure pointed at a test's `assertEqual`; the function to change
    (`parse_time`, called the line above) was never named, and a 1.5B model sent the whole file back
    unchanged three times."""
    repo = make_repo(tmp_path / "proj", {"times.py": TIMES, "test_times.py": TIMES_TEST})
    done = reply("DONE")
    with FakeOpenAI([done, done], models={MODEL: {}}) as api:
        local_bot(api.base_url, 'verify = ["python3 test_times.py"]')
        run_cli("run", "small", cwd=repo)
        first = last_user_text(api.bodies[0])
    assert "It points at test_times.py line 9:" in first
    shown = first[first.index("The code it is about:") :]
    assert shown.startswith("The code it is about: `parse_time` in times.py (line 7):\ntimes.py\n```python\n")
    assert "def parse_time(text):" in shown and "def shout" not in shown.split("```")[1]


def test_a_function_sent_alone_is_put_in_place_of_the_old_one(tmp_path: Path) -> None:
    """A long file's changed function, sent alone, replaces the one of its name; the rest of the file
    stays (before, it was refused as a whole file that drops most of the old lines)."""
    repo = make_repo(tmp_path / "proj", {"times.py": TIMES, "test_times.py": TIMES_TEST})
    fix = reply(
        "Round down.\n\ntimes.py\n```python\nfrom decimal import ROUND_FLOOR\n\n\ndef parse_time(text):\n"
        '    second = Decimal(text).quantize(Decimal(".000001"), rounding=ROUND_FLOOR)\n'
        "    return int((second - int(second)) * 1000000)\n```\n"
    )
    with FakeOpenAI([fix], models={MODEL: {}}) as api:
        local_bot(api.base_url, 'verify = ["python3 test_times.py"]')
        out = run_cli("run", "small", cwd=repo)
    assert out.returncode == 0, out.stderr
    now = show(repo, "times.py")
    assert "rounding=ROUND_FLOOR" in now and "from decimal import ROUND_FLOOR" in now
    assert "def shout(text):\n    return text.upper()" in now and "LIMIT = 10" in now
    assert '"""The microseconds of `text`, rounded."""' not in now  # the old function is gone whole


def test_an_unchanged_file_is_asked_for_the_function_the_failure_is_about(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "proj", {"times.py": TIMES, "test_times.py": TIMES_TEST})
    same = reply(f"Here.\n\ntimes.py\n```python\n{TIMES}```\n")
    with FakeOpenAI([same, reply("DONE")], models={MODEL: {}}) as api:
        local_bot(api.base_url, 'verify = ["python3 test_times.py"]')
        run_cli("run", "small", cwd=repo)
        second = last_user_text(api.bodies[1])
    assert "times.py: already so, nothing to change" in second
    assert "The code it is about: `parse_time` in times.py (line 7):" in second
    assert "write times.py on a line of its own, then `parse_time` alone, whole, with your change" in second


MICROS = '''"""Times."""
from decimal import Decimal


def micros(text):
    """The microseconds of `text`.

    `text` is seconds, as a decimal string.
    """
    second = Decimal(text)
    fraction = second - int(second)
    micro = fraction * 1e6
    micro = micro.quantize(Decimal(1))
    return int(micro)
'''


def test_an_unchanged_reply_is_shown_the_lines_that_fail_and_they_are_put_back_changed(
    tmp_path: Path,
) -> None:
    """isodate ad4e50bd7c: shown the whole function each time, a 1.5B model sent it back unchanged five
    times; shown the lines around the failing one, it wrote them changed, in a block with no path."""
    test = "from micros import micros\n\nassert micros('1.5') == 500000\n"
    repo = make_repo(tmp_path / "proj", {"micros.py": MICROS, "test_micros.py": test})
    same = reply(f"Here.\n\nmicros.py\n```python\n{MICROS}```\n")
    lines = "    fraction = second - int(second)\n    micro = fraction * Decimal(1000000)\n"
    lines += "    micro = micro.quantize(Decimal(1))\n"
    fixed = reply(f"The fix:\n\n```python\n    second = Decimal(text)\n{lines}    return int(micro)\n```\n")
    with FakeOpenAI([same, fixed, reply("DONE")], models={MODEL: {}}) as api:
        local_bot(api.base_url, 'verify = ["python3 test_micros.py"]')
        out = run_cli("run", "small", cwd=repo)
        second = last_user_text(api.bodies[1])
        narrowed = [m for m in api.bodies[1]["messages"] if m["role"] != "system"]
    assert len(narrowed) == 1  # the conversation restarted: the copies of the file it sent are gone
    assert "TypeError: unsupported operand" in second and "# Task\n" in second
    assert "Lines 8-14 of micros.py (the error is on line 12):" in second
    assert (
        "then these lines with your change, in a fenced block (openbot puts them in place of lines 8-14)"
        in second
    )
    assert out.returncode == 0, out.stderr
    assert show(repo, "micros.py") == MICROS.replace("fraction * 1e6", "fraction * Decimal(1000000)").rstrip()


def test_a_change_that_leaves_the_same_line_failing_narrows_and_samples_again(tmp_path: Path) -> None:
    """Asked for the lines that fail, the 1.5B model changed the lines beside the failing one; the check
    failed on the same line, and the conversation went on around the old copies (isodate ad4e50bd7c)."""
    test = "from micros import micros\n\nassert micros('1.5') == 500000\n"
    repo = make_repo(tmp_path / "proj", {"micros.py": MICROS, "test_micros.py": test})
    beside = MICROS.replace('    """The microseconds of `text`.', '    """The microseconds in `text`.')
    fixed = MICROS.replace("fraction * 1e6", "fraction * 1000000")
    replies = [reply(f"micros.py\n```python\n{beside}```\n"), reply(f"micros.py\n```python\n{fixed}```\n")]
    with FakeOpenAI(replies, models={MODEL: {}}) as api:
        local_bot(api.base_url, 'verify = ["python3 test_micros.py"]')
        out = run_cli("run", "small", cwd=repo)
        second = last_user_text(api.bodies[1])
        body = api.bodies[1]
    assert out.returncode == 0, out.stderr
    assert [m["role"] for m in body["messages"] if m["role"] != "system"] == ["user"]
    assert (body["temperature"], body["seed"]) == (0.7, 1)
    assert second.startswith("[openbot] The check still fails on the same line:")
    assert '  File "micros.py", line 12, in micros\n    micro = fraction * 1e6\nTypeError:' in second
    assert "Fix line 12, where the error is: write micros.py on a line of its own" in second


def test_a_reply_without_an_edit_while_the_check_fails_is_not_the_end(tmp_path: Path) -> None:
    """After a committed edit, a reply with no edit was taken as "nothing left to change" though the check
    still failed: three sessions ended that way in 40 s, each failing verification (isodate ad4e50bd7c)."""
    repo = checked_project(tmp_path)
    talk = reply("I have changed what was needed.")
    with FakeOpenAI([config_reply(3), talk, config_reply(5)], models={MODEL: {}}) as api:
        local_bot(api.base_url, 'verify = ["python3 test_config.py"]')
        out = run_cli("run", "small", cwd=repo)
        third = last_user_text(api.bodies[2])
    assert out.returncode == 0, out.stderr
    assert "held no edit and no command" in third and "The check still fails." in third
    assert [e["status"] for e in events(sessions("small")[0]) if e["type"] == "session_ended"] == [
        "completed"
    ]


def test_each_new_try_at_the_same_failure_gets_a_seed_not_used_before(tmp_path: Path) -> None:
    """The seed restarted at 1 after each change, so the same narrowed question got the same answer: the
    1.5B model commented the failing line out, then back in, 20 times (isodate ad4e50bd7c)."""
    test = "from micros import micros\n\nassert micros('1.5') == 500000\n"
    repo = make_repo(tmp_path / "proj", {"micros.py": MICROS, "test_micros.py": test})
    fixed = MICROS.replace("fraction * 1e6", "fraction * 1000000")
    same = reply(f"micros.py\n```python\n{MICROS}```\n")
    here = reply("```python\n    fraction = second - int(second)\n    micro = fraction * 1e6 * 1\n```\n")
    replies = [same, here, reply(f"micros.py\n```python\n{fixed}```\n")]  # a change between the two tries
    with FakeOpenAI(replies, models={MODEL: {}}) as api:
        local_bot(api.base_url, 'verify = ["python3 test_micros.py"]')
        out = run_cli("run", "small", cwd=repo)
        seeds = [b.get("seed") for b in api.bodies]
    assert out.returncode == 0, out.stderr
    assert seeds == [None, 1, 2]


def test_a_narrowed_try_that_fails_another_way_is_undone_and_the_next_starts_from_the_same_lines(
    tmp_path: Path,
) -> None:
    """The 1.5B model's narrowed tries at ad4e50bd7c each started from the last one's state and wandered
    into other functions' code (AttributeError, UnboundLocalError) until the run's time was up."""
    test = "from micros import micros\n\nassert micros('1.5') == 500000\n"
    repo = make_repo(tmp_path / "proj", {"micros.py": MICROS, "test_micros.py": test})
    same = reply(f"micros.py\n```python\n{MICROS}```\n")
    away = reply("```python\n    fraction = second - int(second)\n    # micro = fraction * 1e6\n```\n")
    fixed = reply(f"micros.py\n```python\n{MICROS.replace('fraction * 1e6', 'fraction * 1000000')}```\n")
    here = reply("```python\n    fraction = second - int(second)\n    micro = fraction * 1e6 * 1\n```\n")
    with FakeOpenAI([same, away, here, fixed], models={MODEL: {}}) as api:
        local_bot(api.base_url, 'verify = ["python3 test_micros.py"]')
        out = run_cli("run", "small", cwd=repo)
        third, fourth = api.bodies[2], api.bodies[3]
    assert out.returncode == 0, out.stderr
    assert [m["role"] for m in third["messages"] if m["role"] != "system"] == ["user"]  # narrowed again
    assert third["seed"] == 2 and "micro = fraction * 1e6" in last_user_text(third)  # the lines as they were
    assert fourth["seed"] == 3 and "micro = fraction * 1e6\n" in last_user_text(fourth)  # same spot: undone
    log = git(repo, "log", "--format=%s", branch_of(repo)).splitlines()
    assert log[1].startswith("Undo a try that failed with TypeError")  # each try stays in the history
    assert log[3].startswith("Undo a try that failed with UnboundLocalError")
    assert show(repo, "micros.py") == MICROS.replace("fraction * 1e6", "fraction * 1000000").rstrip()


def test_lines_of_a_python_file_sent_as_the_file_are_not_written_over_it(tmp_path: Path) -> None:
    """A 1.5B model echoed the lines openbot showed it after the file's path: written as the whole file,
    they replaced a 158-line module with 9 lines (isodate ad4e50bd7c)."""
    repo = make_repo(tmp_path / "proj", {"micros.py": MICROS, "test_micros.py": "import micros\n"})
    part = reply("micros.py\n```python\n    second = Decimal(text)\n    return int(second)\n```\n")
    with FakeOpenAI([part, reply("DONE"), reply("DONE")], models={MODEL: {}}) as api:
        local_bot(api.base_url, 'verify = ["python3 test_micros.py"]')
        run_cli("run", "small", cwd=repo)
        second = last_user_text(api.bodies[1])
    assert "micros.py: not changed: its first line is indented, so this is part of the file" in second
    assert branch_of(repo) == ""  # nothing was written, so nothing was committed and no branch kept


def test_a_reply_sent_again_that_changes_nothing_is_said_and_sampled_differently(tmp_path: Path) -> None:
    """After the narrowing, the 1.5B model sent one refused block 25 times in a row, each answered with the
    same refusal and sampled the same way (isodate ad4e50bd7c)."""
    repo = make_repo(tmp_path / "proj", {"micros.py": MICROS, "test_micros.py": "import micros\n"})
    part = reply("micros.py\n```python\n    second = Decimal(text)\n    return int(second)\n```\n")
    with FakeOpenAI([part, part, reply("DONE"), reply("DONE")], models={MODEL: {}}) as api:
        local_bot(api.base_url, 'verify = ["python3 test_micros.py"]')
        run_cli("run", "small", cwd=repo)
        second, third = last_user_text(api.bodies[1]), last_user_text(api.bodies[2])
        bodies = api.bodies
    assert "same as your last one" not in second and "temperature" not in bodies[1]
    assert "That reply is the same as your last one, and changes nothing" in third
    assert (bodies[2]["temperature"], bodies[2]["seed"]) == (0.7, 1)


def test_a_refused_file_is_not_called_unchanged(tmp_path: Path) -> None:
    """A whole file the model has not seen is refused; "what you sent is the file as it is now" was said
    of it too, which was false."""
    repo = checked_project(tmp_path)
    big = "".join(f"V{n} = {n}\n" for n in range(2000))
    git(repo, "add", "-A")
    (repo / "other.py").write_text(big)
    git(repo, "add", "other.py")
    git(repo, "commit", "-q", "-m", "other")
    blind = reply("Here.\n\nother.py\n```python\nV1 = 2\n```\n")
    with FakeOpenAI([blind, reply("DONE")], models={MODEL: {}}) as api:
        local_bot(api.base_url, 'verify = ["python3 test_config.py"]\ncontext_window = 8192')
        run_cli("run", "small", cwd=repo)
        second = last_user_text(api.bodies[1])
    assert "other.py: not changed: you have not seen this file" in second
    assert "What you sent is the file as it is now" not in second


def test_a_full_window_restarts_from_the_files_as_they_are_now_without_a_summary_call(tmp_path: Path) -> None:
    """On a 1.5B CPU model the summary a compaction asked for was 38 s of a 4-minute run, and the new
    segment's first message still showed the files as they were before the model's edits."""
    repo = checked_project(tmp_path)
    talk = "I will think about this at length. " * 120  # ~4,300 characters a reply
    tries = [config_reply(n, f"{talk}\n\n") for n in (2, 3, 4)]
    with FakeOpenAI([*tries, config_reply(5)], models={MODEL: {}}) as api:
        local_bot(api.base_url, 'verify = ["python3 test_config.py"]\ncontext_window = 4096')
        out = run_cli("run", "small", cwd=repo)
        bodies = api.bodies
    assert out.returncode == 0, out.stderr
    [session] = sessions("small")
    restarted = [e for e in events(session) if e.get("kind") == "context_compacted"]
    assert restarted and "restarted from the files as they are now" in restarted[0]["message"]
    assert len(bodies) == 4  # every request was an edit's: none asked for a summary
    first_of_last = bodies[-1]["messages"][1]["content"]
    text = first_of_last if isinstance(first_of_last, str) else first_of_last[0]["text"]
    assert "# Files\nconfig.py\n```python\nX = " in text and "X = 1\n" not in text  # as it is now
    assert "AssertionError" in text and text.index("AssertionError") < text.index("# Task")


def test_an_unchanged_file_after_a_failing_edit_is_answered_not_taken_as_done(tmp_path: Path) -> None:
    """isodate ad4e50bd7c: after its edit failed the check, the model sent the same function again; that
    ended the session as "nothing left to change", verification failed it, and a new session began —
    twice, ~40 s each, without the model hearing what it sent was unchanged."""
    repo = checked_project(tmp_path)
    wrong, right = config_reply(4), config_reply(5)
    with FakeOpenAI([wrong, wrong, right], models={MODEL: {}}) as api:
        local_bot(api.base_url, 'verify = ["python3 test_config.py"]')
        out = run_cli("run", "small", cwd=repo)
        third = last_user_text(api.bodies[2])
    assert out.returncode == 0, out.stderr
    assert "What you sent is the file as it is now: nothing changed, and the check still fails." in third
    [session] = sessions("small")
    assert [e for e in events(session) if e.get("type") == "turn_completed"][:-1] == []  # one turn
    assert show(repo, "config.py") == "X = 5\nY = 2"


def test_a_file_sent_back_unchanged_again_is_sampled_differently_unless_the_bot_set_sampling(
    tmp_path: Path,
) -> None:
    """llama-server's fixed seed and 0.2 temperature gave the 1.5B model's same reply to the same state:
    one unchanged function five times in a row. The next request samples differently — unless the bot
    says how to sample."""
    repo = checked_project(tmp_path)
    same, right = config_reply(1), config_reply(5)
    with FakeOpenAI([same, same, right], models={MODEL: {}}) as api:
        local_bot(api.base_url, 'verify = ["python3 test_config.py"]')
        out = run_cli("run", "small", cwd=repo)
        bodies = api.bodies
    assert out.returncode == 0, out.stderr
    assert "temperature" not in bodies[0] and "seed" not in bodies[0]
    assert (bodies[1]["temperature"], bodies[1]["seed"]) == (0.7, 1)
    assert bodies[2]["temperature"] > bodies[1]["temperature"] and bodies[2]["seed"] == 2
    with FakeOpenAI([same, right], models={MODEL: {}}) as api:
        local_bot(api.base_url, 'verify = ["python3 test_config.py"]\ntemperature = 0.1')
        run_cli("run", "small", cwd=repo)
        assert [b["temperature"] for b in api.bodies] == [0.1, 0.1]
