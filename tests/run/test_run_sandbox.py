"""The sandbox as a run applies it: real Landlock on the agent's commands, through `openbot run`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from openbot import paths
from openbot.sandbox import kernel_support
from tests.helpers import complete, events, git, make_bot, reply, run_cli, sessions, shell

pytestmark = pytest.mark.skipif(kernel_support().landlock_abi == 0, reason="the kernel has no Landlock")


def exit_codes(bot: str) -> dict[str, int | None]:
    return {e["tool_use_id"]: e["exit_code"] for e in events(sessions(bot)[-1]) if e["type"] == "command"}


def test_workspace_write_confines_the_agent_but_lets_it_work(repo: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    skill = paths.bot_skills_dir("boxed") / "learned.md"
    make_bot(
        "boxed",
        [
            reply(
                "",
                shell(f"touch {home}/escape", "home"),
                shell(f"touch {repo}/escape", "checkout"),
                shell(
                    f"git --git-dir={repo}/.git update-ref refs/heads/main $(git rev-parse HEAD)", "branch"
                ),
                shell("echo x > work.txt && git add -A && git commit -qm work", "commit"),
                shell('echo t > "$TMPDIR/t" && echo out > /dev/stdout', "tmp"),
                shell(f"printf -- '---\\nname: learned\\n---\\nA lesson.\\n' > {skill}", "skill"),
                shell(f"touch {paths.home()}/escape", "obhome"),
            ),
            reply("", complete("tried everything", "review")),
        ],
    )
    main_before = git(repo, "rev-parse", "main")
    out = run_cli("run", "boxed", "--json", cwd=repo, env={"HOME": str(home)})
    assert out.returncode == 0, out.stderr
    codes = exit_codes("boxed")
    assert codes["home"] != 0 and codes["checkout"] != 0 and codes["branch"] != 0 and codes["obhome"] != 0
    assert codes["commit"] == 0 and codes["tmp"] == 0 and codes["skill"] == 0
    assert not (home / "escape").exists() and not (repo / "escape").exists()
    assert git(repo, "rev-parse", "main") == main_before
    branch = json.loads(out.stdout)["branch"]
    assert git(repo, "log", "-1", "--format=%s", branch) == "work"
    assert "A lesson." in skill.read_text()


def test_read_only_can_read_and_log_but_not_write(repo: Path) -> None:
    make_bot(
        "reader",
        [
            reply("", shell("cat README.md && git log --oneline", "read"), shell("touch new.txt", "write")),
            reply("", complete("read only", "discard")),
        ],
        config='sandbox = "read-only"',
    )
    out = run_cli("run", "reader", "--json", cwd=repo)
    assert out.returncode == 0, out.stderr
    codes = exit_codes("reader")
    assert codes["read"] == 0 and codes["write"] != 0
    assert json.loads(out.stdout)["wip_commits"] == []


def test_network_is_off_unless_configured(repo: Path) -> None:
    import socket
    import threading

    accepted: list[int] = []

    def serve_one() -> None:
        conn, _ = server.accept()
        conn.close()
        accepted.append(1)

    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        acceptor = threading.Thread(target=serve_one, daemon=True)
        acceptor.start()
        probe = f"exec 3<>/dev/tcp/127.0.0.1/{port}"
        make_bot("offline", [reply("", shell(probe, "tcp")), reply("", complete())])
        make_bot("online", [reply("", shell(probe, "tcp")), reply("", complete())], config="network = true")
        assert run_cli("run", "offline", cwd=repo).returncode == 0
        assert run_cli("run", "online", cwd=repo).returncode == 0
        acceptor.join(timeout=10)
    assert exit_codes("offline")["tcp"] != 0 and exit_codes("online")["tcp"] == 0
    assert accepted == [1]  # exactly one connection arrived: the one network = true allowed


@pytest.mark.parametrize("fallback", ["error", "warn"])
def test_a_kernel_without_landlock_is_refused_or_loudly_unconfined(repo: Path, fallback: str) -> None:
    from tests.helpers import metadata

    make_bot(
        "nolock",
        [reply("", shell("touch outside-the-box")), reply("", complete())],
        config=f'sandbox_fallback = "{fallback}"',
    )
    out = run_cli("run", "nolock", "--json", cwd=repo, env={"OPENBOT_SANDBOX_FORCE_UNAVAILABLE": "all"})
    if fallback == "error":
        assert out.returncode == 2 and "danger-full-access" in out.stderr and "sandbox_fallback" in out.stderr
        assert sessions("nolock") == [] and "openbot/" not in git(repo, "branch")  # nothing was created
    else:
        assert out.returncode == 0, out.stderr
        assert "WARNING" in out.stderr
        meta = metadata(sessions("nolock")[0])
        assert meta["sandbox"]["enforced"] == "danger-full-access" and meta["sandbox"]["warning"]
        assert any(
            e["type"] == "notice" and e["kind"] == "sandbox_unconfined" for e in events(sessions("nolock")[0])
        )


def test_workspace_write_still_builds_tests_and_commits_with_a_private_home(tmp_path: Path) -> None:
    from tests.helpers import make_repo

    repo = make_repo(
        tmp_path / "proj",
        {"calc.py": "def add(a, b):\n    return a + b\n", "test_calc.py": TEST_CALC},
    )
    home = tmp_path / "user-home"
    home.mkdir()
    make_bot(
        "builder",
        [
            reply(
                "",
                shell(f"{sys.executable} -m compileall -q . && {sys.executable} -m unittest -q", "test"),
                # pip, npm, pre-commit: a writable home and cache, the run's own, not the user's
                shell(
                    'echo c > "$HOME/.cache-probe" && git config --global user.nick bot && echo "$HOME"',
                    "home",
                ),
                shell(f"touch {home}/x", "userhome"),
                shell("echo '# more' >> calc.py && git commit -qam edit", "commit"),
            ),
            reply("", complete("built", "review")),
        ],
    )
    out = run_cli("run", "builder", "--json", cwd=repo, env={"HOME": str(home)})
    assert out.returncode == 0, out.stderr
    codes = exit_codes("builder")
    assert (
        codes == {"test": 0, "home": 0, "userhome": codes["userhome"], "commit": 0} and codes["userhome"] != 0
    )
    [home_event] = [
        e for e in events(sessions("builder")[-1]) if e.get("tool_use_id") == "home" and "output" in e
    ]
    assert str(home) not in home_event["output"] and list(home.iterdir()) == []
    # (the WIP commit on top saves the __pycache__ the build left untracked)
    assert "edit" in git(repo, "log", "--format=%s", json.loads(out.stdout)["branch"]).splitlines()


def test_danger_full_access_is_full(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    make_bot(
        "free",
        [reply("", shell(f"touch {outside} && ip link show lo >/dev/null", "free")), reply("", complete())],
        config='sandbox = "danger-full-access"',
    )
    assert run_cli("run", "free", cwd=repo).returncode == 0
    assert exit_codes("free")["free"] == 0 and outside.exists()


TEST_CALC = """import unittest
from calc import add


class T(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(1, 2), 3)
"""
