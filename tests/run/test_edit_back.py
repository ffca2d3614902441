"""work_mode "edits": back to the start (agent/editback.py) through the real CLI — narrowed tries at a
failure the session's own edit made, undone four times in a row, put every file back as it was."""

from __future__ import annotations

from pathlib import Path

from openbot.testing.fakeopenai import FakeOpenAI, last_user_text, reply
from tests.helpers import git, make_repo, run_cli
from tests.run.test_edit_mode import MODEL, branch_of, conversation_texts, local_bot, show

HALF = "def half(n):\n    return n / 2\n"
TEST = "from calc import half\n\n\ndef test_half():\n    assert half(5) == 2, half(5)\n\n\ntest_half()\n"


def test_tries_at_a_failure_the_sessions_edit_made_go_back_to_the_files_as_they_were(tmp_path: Path) -> None:
    """more-itertools 0e6acdf9b6: the 1.5B model's first edit added the guard the task asked for and a
    copied `if n is None: raise` above it; its narrowed tries at that new failure were each undone, and
    every next try was made from the state the first edit had left, 20 times, until the run's time ran
    out."""
    repo = make_repo(tmp_path / "proj", {"calc.py": HALF, "test_calc.py": TEST})
    broken = HALF.replace("n / 2", "n // two")
    first = reply(f"calc.py\n```python\n{broken}```\n")
    tries = [
        reply(f"calc.py\n```python\ndef half(n):\n    return n // tw{'o' * k}\n```\n") for k in range(2, 6)
    ]
    fixed = reply("calc.py\n```python\ndef half(n):\n    return n // 2\n```\n")
    with FakeOpenAI([first, first, *tries, fixed], models={MODEL: {}}) as api:
        local_bot(api.base_url, 'verify = ["python3 test_calc.py"]')
        out = run_cli("run", "small", cwd=repo)
        last = api.bodies[-1]
    assert out.returncode == 0, out.stderr
    assert show(repo, "calc.py") == "def half(n):\n    return n // 2"
    log = git(repo, "log", "--format=%s", branch_of(repo)).splitlines()
    assert log[1] == "Put back the files as they were before this session's edits"
    assert sum(s.startswith("Undo a try that failed with NameError") for s in log) == 4
    asked = last_user_text(last)  # a new conversation: what was put back, the failure, the function
    assert [m["role"] for m in last["messages"] if m["role"] != "system"] == ["user"]
    assert asked.startswith("[openbot] Your edits made the check fail another way (NameError: name 'two' ")
    assert "4 tries at it failed, so the files are back as they were before your edits" in asked
    assert "AssertionError: 2.5" in asked and "The code it is about: `half` in calc.py (line 1):" in asked
    assert "return n / 2" in asked and "two" not in asked.split("The code it is about")[1]
    assert any("so the files are back" in t for t in conversation_texts("small"))
