"""openbot's own virtualenv, activated (README set-up 1), is never first on the bot's PATH: the bot's and
its checks' `python3` is the system's, not openbot's interpreter with openbot's packages (issue 35, item 2);
`bots show` and `doctor` say which `python3` the bot gets."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from tests.helpers import complete, events, make_bot, make_repo, reply, run_cli, sessions, shell

CHECK = "python3 -c 'import sys; assert sys.prefix == sys.base_prefix, sys.prefix'"


def test_an_activated_openbot_venv_is_not_the_bots_or_its_checks_python3(tmp_path: Path) -> None:
    own_bin = Path(sys.prefix) / "bin"
    assert sys.prefix != sys.base_prefix, "the tests run from openbot's virtualenv"
    activated = {"PATH": f"{own_bin}{os.pathsep}{os.environ['PATH']}", "VIRTUAL_ENV": sys.prefix}
    repo = make_repo(tmp_path / "repo", {"README.md": "# demo\n"})
    config = f'verify = ["{CHECK}"]\nverify_attempts = 1\n'
    make_bot("py", [reply("", shell("command -v python3", "which")), reply("", complete())], config)
    out = run_cli("run", "py", "--json", cwd=repo, env=activated)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["verified"] is True  # the check's python3 is not openbot's
    (ran,) = [e for e in events(sessions("py")[-1]) if e["type"] == "command"]
    assert ran["exit_code"] == 0 and not ran["output"].startswith(str(own_bin)), ran["output"]
    for said in (
        run_cli("bots", "show", "py", cwd=repo, env=activated),
        run_cli("doctor", cwd=repo, env=activated),
    ):
        line = next(x for x in said.stdout.splitlines() if "python3" in x and "left off" in x)
        assert f"{own_bin}/python3" not in line and "/python3" in line, line
