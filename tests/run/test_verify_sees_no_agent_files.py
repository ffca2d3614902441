"""Verification's sandbox sees nothing of the agent's, through the real CLI: a committed `conftest.py`-style
link into the agent's uncommitted files (`__pycache__/`, which the WIP commit leaves out) reaches nothing
in the check, which fails as the tests will on main; nothing is merged."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import complete, git, make_bot, make_repo, reply, run_cli, shell

FILES = {"test_answer.py": "from helper import ANSWER\n\nassert ANSWER == 42\nprint('ok')\n"}
# The link is absolute, into the agent's own checkout: on the bot's machine it resolves, on main it won't.
LINK = (
    "mkdir -p __pycache__ && echo 'ANSWER = 42' > __pycache__/real_helper.py"
    ' && ln -s "$PWD/__pycache__/real_helper.py" helper.py && git add helper.py && git commit -qm helper'
)


def test_a_committed_link_into_the_agents_uncommitted_files_fails_the_check(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    config = 'verify = ["python3 test_answer.py"]\nverify_attempts = 1'
    make_bot("linker", [reply("", shell(LINK)), reply("", complete("done", "merge"))], config)

    out = run_cli("run", "linker", "--json", cwd=repo)

    assert out.returncode == 5, out.stderr
    result = json.loads(out.stdout)
    assert result["verified"] is False, result
    assert "`python3 test_answer.py` exited with 1" in result["verification"]["reason"], result
    assert git(repo, "log", "-1", "--format=%s", "main") == "initial"
    # The link is kept on the branch, for review: what fails is what main would get.
    assert git(repo, "cat-file", "-t", f"{result['branch']}:helper.py") == "blob"
