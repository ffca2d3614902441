"""The user's editable install of the repository (their dev venv on PATH) must not make the bot import the
user's checkout: the bot's commands get PYTHONPATH pointing at the same directories in the bot's own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from openbot.run.editable import editable_paths
from tests.helpers import complete, events, make_bot, reply, run_cli, sessions, shell
from tests.run.test_run import run_events

# What setuptools >= 64 writes for a flat layout (`pip install -e .`), taken from a real install.
FINDER = """\
from __future__ import annotations
import sys
from importlib.machinery import ModuleSpec, PathFinder
MAPPING: dict[str, str] = {'fpkg': '%s'}
NAMESPACES: dict[str, list[str]] = {}
PATH_PLACEHOLDER = '__editable__.fpkg-0.1.finder' + ".__path_hook__"
"""


def _venv(root: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    return next(root.glob("lib/python3*/site-packages"))


def test_the_bot_imports_its_own_checkout_not_the_users_editable_install(repo: Path, tmp_path: Path) -> None:
    (repo / "src" / "pkg").mkdir(parents=True)
    (repo / "src" / "pkg" / "__init__.py").write_text('WHERE = "base"\n')
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "pkg"], cwd=repo, check=True
    )
    site = _venv(tmp_path / "devvenv")
    (site / "__editable__.pkg-0.1.pth").write_text(f"{repo / 'src'}\n")  # as setuptools writes a src layout
    make_bot(
        "edit",
        [
            reply("", shell("""sed -i 's/base/bot/' src/pkg/__init__.py && git commit -qam bot""")),
            reply("", shell("python3 -c 'import pkg; print(pkg.WHERE, pkg.__file__)'")),
            reply("", complete("ok")),
        ],
    )
    env = {"PATH": f"{tmp_path / 'devvenv' / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    out = run_cli("run", "edit", "--json", cwd=repo, env=env)
    assert out.returncode == 0, out.stderr
    branch = json.loads(out.stdout)["branch"]
    evs = events(sessions("edit")[-1])
    ran = [e for e in evs if e["type"] == "command" and "import pkg" in e["command"]]
    assert ran and ran[0]["output"].startswith("bot "), ran  # the bot's change, not the user's checkout
    assert str(repo / "src") not in ran[0]["output"]
    said = [
        e for e in run_events("edit", json.loads(out.stdout)["run_id"]) if e.get("kind") == "editable_install"
    ]
    assert said and "PYTHONPATH=" in said[0]["message"] and "editable install" in out.stderr and branch


def test_a_finder_mapping_and_a_path_line_are_both_mapped(tmp_path: Path) -> None:
    user, bot = tmp_path / "user", tmp_path / "bot"
    site = _venv(tmp_path / "v")
    (site / "__editable__.fpkg-0.1.pth").write_text(
        "import __editable___fpkg_0_1_finder; __editable___fpkg_0_1_finder.install()\n"
    )
    (site / "__editable___fpkg_0_1_finder.py").write_text(FINDER % (user / "fpkg"))
    (site / "__editable__.other-0.1.pth").write_text(f"{user / 'src'}\n")
    (site / "unrelated.pth").write_text(f"{tmp_path / 'elsewhere'}\n")
    env = {"PATH": str(tmp_path / "v" / "bin"), "HOME": str(tmp_path / "nohome")}
    assert editable_paths(env, user, bot) == [str(bot), str(bot / "src")]
    assert editable_paths(env, user, user) == []  # --no-worktree: the user's checkout is the bot's
