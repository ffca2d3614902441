"""openbot's own interpreter is never the agent's to write: a `--no-worktree` run in a checkout whose
`.venv/` is the virtualenv openbot runs from leaves that `.venv/` read-only, and says so (issue 32, NW).

Root only: this machine's Python lives under root-only /root, which a sandboxed command started as
`nobody` cannot execute (tests/run/test_hostile_files.py); the walls are the same for both users.
"""

from __future__ import annotations

import base64
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

import openbot
from openbot.sandbox import kernel_support
from tests.helpers import complete, events, git, make_bot, make_repo, reply, run_cli, sessions, shell

pytestmark = pytest.mark.skipif(
    kernel_support().landlock_abi == 0 or not kernel_support().bwrap,
    reason="needs both walls (Landlock and bwrap)",
)


def checkout_with_openbots_venv(repo: Path) -> tuple[Path, Path]:
    """`repo/.venv` with openbot installed (a `.pth` naming openbot's source and its dependencies, as an
    editable install does) and an `openbot` console script: (the script, the venv's site-packages)."""
    venv = repo / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    source = Path(openbot.__file__).resolve().parent.parent
    (Path(purelib) / "openbot-dev.pth").write_text(f"{source}\n{sysconfig.get_path('purelib')}\n")
    script = venv / "bin" / "openbot"
    script.write_text(f"#!{python}\nimport sys\nfrom openbot.cli.app import main\nsys.exit(main())\n")
    script.chmod(0o755)
    return script, Path(purelib)


def written(path: str, text: str) -> str:
    return f"echo {base64.b64encode(text.encode()).decode()} | base64 -d > {path}"


def test_a_no_worktree_run_cannot_plant_code_in_the_venv_openbot_runs_from(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "# demo\n", ".gitignore": ".venv/\n"})
    script, site_dir = checkout_with_openbots_venv(repo)
    canary = tmp_path / "PLANTED-CODE-RAN"  # under /tmp: hidden from the sandbox, written only unconfined
    site = site_dir.relative_to(repo)
    attacks = {
        "pth": written(f"{site}/zz_planted.pth", f"import os; open({str(canary)!r}, 'w')\n"),
        "sitecustomize": written(f"{site}/sitecustomize.py", f"open({str(canary)!r}, 'w')\n"),
        "package": written(f"{site}/openbot-dev.pth", "/nowhere\n"),
        "script": written(".venv/bin/openbot", f"#!/bin/sh\ntouch {canary}\n"),
        "python": "ln -sf /bin/true .venv/bin/python",
        "config": "echo 'include-system-site-packages = true' >> .venv/pyvenv.cfg",
    }
    edit = {
        "name": "edit",
        "id": "edit-pth",
        "input": {"command": "create", "path": f"{site}/zz_edit.pth", "file_text": "import os\n"},
    }
    calls = [shell(cmd, id) for id, cmd in attacks.items()]
    make_bot(
        "inplace", [reply("", *calls, edit, shell("echo ok >> README.md", "legit")), reply("", complete())]
    )
    before = {p: p.read_bytes() for p in (repo / ".venv").rglob("*") if p.is_file()}

    out = subprocess.run(
        [str(script), "run", "inplace", "--no-worktree"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert out.returncode == 0, out.stderr
    # openbot's next start runs no code the agent planted.
    again = subprocess.run([str(script), "history", "inplace"], cwd=repo, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert not canary.exists()

    evs = events(sessions("inplace")[-1])
    codes = {e["tool_use_id"]: e["exit_code"] for e in evs if e["type"] == "command"}
    assert codes["legit"] == 0 and [id for id in attacks if codes[id] == 0] == [], codes
    result = [e for e in evs if e["type"] == "tool_result" and e["tool_use_id"] == "edit-pth"][0]
    assert result["is_error"] and "sandbox forbids" in result["content"]
    after = {p: p.read_bytes() for p in (repo / ".venv").rglob("*") if p.is_file()}
    assert after == before and (repo / "README.md").read_text() == "# demo\nok\n"
    assert git(repo, "status", "--porcelain") == "M README.md"
    assert f"openbot runs from {(repo / '.venv').resolve()}" in out.stderr  # said at the start


def test_a_checkout_on_openbots_import_path_is_not_taken_for_openbots_own(tmp_path: Path) -> None:
    """`python -m openbot` puts the checkout first on its import path; a Python project's checkout holds
    `<name>.egg-info/` (a legacy editable install): it is not a site directory, and stays the bot's."""
    repo = make_repo(tmp_path / "repo", {"README.md": "# demo\n", "demo.egg-info/PKG-INFO": "Name: demo\n"})
    make_bot("inplace", [reply("", shell("echo ok >> README.md", "legit")), reply("", complete())])
    out = run_cli("run", "inplace", "--no-worktree", cwd=repo)
    assert out.returncode == 0, out.stderr
    codes = {
        e["tool_use_id"]: e["exit_code"] for e in events(sessions("inplace")[-1]) if e["type"] == "command"
    }
    assert codes["legit"] == 0 and (repo / "README.md").read_text() == "# demo\nok\n"
    assert "openbot runs from" not in out.stderr
