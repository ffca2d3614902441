"""The user's own filter drivers never run the agent's files beside the walls, through the real CLI: a
`filter.strip.smudge = ./tools/strip.sh` in the user's config runs the repository's `tools/strip.sh`,
which the bot's commits (or its uncommitted files) can be. Verification's clean checkout runs no such
filter, the merge refuses it, the WIP commit leaves its files out. And the agent's `.lfsconfig` neither
breaks the WIP commit nor reaches the user after a refused LFS merge."""

from __future__ import annotations

import http.server
import json
import os
import re
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import complete, events, git, make_bot, make_repo, reply, run_cli, sessions, shell
from tests.run.test_repo_attacks import DROP, nobody_repo, python_for_nobody

__all__ = ["nobody_repo"]  # the fixture, shared

BENIGN = "#!/bin/sh\ncat\n"
# The bot's strip.sh: inside the sandbox /tmp is empty, so only a run beside the walls leaves the mark.
HOSTILE = "#!/bin/sh\necho ran >> {mark} 2>/dev/null\ncat\n"


def strip_repo(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "repo", {"tools/strip.sh": BENIGN, ".gitattributes": "* filter=strip\n"})
    (repo / "tools" / "strip.sh").chmod(0o755)
    git(repo, "add", "tools/strip.sh")
    git(repo, "commit", "-qm", "strip filter")
    for key in ("clean", "smudge"):
        git(repo, "config", f"filter.strip.{key}", "./tools/strip.sh")
    return repo


def plant(mark: Path) -> str:
    """The bot's shell command that makes tools/strip.sh its own."""
    text = HOSTILE.format(mark=mark).replace("\n", "\\n")
    return f"printf '{text}' > tools/strip.sh && echo work > work.txt"


def test_a_filter_naming_a_repository_path_never_runs_the_bots_script_to_verify_or_merge(
    tmp_path: Path,
) -> None:
    repo, mark = strip_repo(tmp_path), tmp_path / "ran-beside-the-walls"
    work = plant(mark) + " && git add -A && git commit -qm 'strip, my way'"
    make_bot("stripper", [reply("", shell(work)), reply("", complete("done", "merge"))], 'verify = ["true"]')

    out = run_cli("run", "stripper", "--json", cwd=repo)

    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["verified"] is True, result
    assert not mark.exists(), "the bot's tools/strip.sh ran outside the sandbox"
    (said,) = [e for e in events(sessions("stripper")[0]) if "drivers" in e.get("data", {})]
    assert said["data"]["drivers"] == {f"filter.strip.{k}": "./tools/strip.sh" for k in ("clean", "smudge")}
    assert result["action_message"].startswith("not merged: "), result["action_message"]
    assert (
        "filter.strip" in result["action_message"]
        and "names a file in the repository" in (result["action_message"])
    )
    assert git(repo, "log", "-1", "--format=%s", "main") == "strip filter"
    assert (repo / "tools" / "strip.sh").read_text() == BENIGN


def test_as_an_ordinary_user_the_filter_script_runs_neither(
    nobody_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same as `nobody` (uid 65534) owning the repository and the home: no root-only step makes the
    difference, and none is left that runs the bot's script."""
    top = nobody_repo.parent
    repo, home, mark = strip_repo(top / "strip"), top / "home", top / "ran-beside-the-walls"
    work = plant(mark) + " && git add -A && git commit -qm 'strip, my way'"
    script = {"responses": [reply("", shell(work)), reply("", complete("done", "merge"))]}
    bot = home / "bots" / "stripper"
    bot.mkdir(parents=True)
    (bot / "script.json").write_text(json.dumps(script))
    (bot / "config.md").write_text(
        '+++\nmodel = "scripted:script.json"\nsleep_secs = 0\nverify = ["true"]\n+++\n\nWork.\n'
    )
    subprocess.run(["chown", "-R", "65534:65534", str(top)], check=True)
    for key, value in {"COUNT": "1", "KEY_0": "safe.directory", "VALUE_0": "*"}.items():
        monkeypatch.setenv(f"GIT_CONFIG_{key}", value)  # root's own git reads the other user's repo
    python, path = python_for_nobody()
    env = {**os.environ, "OPENBOT_HOME": str(home), "HOME": str(home), "PYTHONPATH": path}
    out = subprocess.run(
        [*DROP, python, "-m", "openbot", "run", "stripper", "--json"],
        cwd=repo, env=env, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert not mark.exists(), "the bot's tools/strip.sh ran outside the sandbox"
    result = json.loads(out.stdout)
    assert result["verified"] is True and result["action_message"].startswith("not merged: "), result
    assert git(repo, "log", "-1", "--format=%s", "main") == "strip filter"


def test_the_wip_commit_leaves_out_what_a_repository_path_filter_would_clean(tmp_path: Path) -> None:
    repo, mark = strip_repo(tmp_path), tmp_path / "ran-beside-the-walls"
    make_bot("stripper", [reply("", shell(plant(mark))), reply("", complete())])

    out = run_cli("run", "stripper", "--json", cwd=repo)

    assert out.returncode == 0, out.stderr
    assert not mark.exists(), "the bot's tools/strip.sh ran outside the sandbox"
    assert "left out of the WIP commit" in out.stderr, out.stderr
    assert "work.txt (filter strip would run a file of the checkout outside the sandbox)" in out.stderr


def test_a_resume_checks_the_bots_commit_out_without_running_its_filter_script(tmp_path: Path) -> None:
    repo, mark = strip_repo(tmp_path), tmp_path / "ran-beside-the-walls"
    work = plant(mark) + " && git add -A && git commit -qm 'strip, my way'"
    config = 'verify = ["false"]\nverify_attempts = 1'
    bot_dir = make_bot("stripper", [reply("", shell(work)), reply("", complete())], config)
    first = run_cli("run", "stripper", "--json", cwd=repo)
    assert first.returncode == 5, first.stderr
    assert not mark.exists()
    # the script goes on after the reply the conversation holds (docs/SCRIPTED.md)
    (bot_dir / "script.json").write_text(json.dumps({"responses": [reply("", complete())] * 2}))

    resumed = run_cli("run", "stripper", "--resume", json.loads(first.stdout)["run_id"], cwd=repo)

    assert resumed.returncode == 5, resumed.stderr
    assert not mark.exists(), "the resumed checkout ran the bot's tools/strip.sh outside the sandbox"


needs_lfs = pytest.mark.skipif(shutil.which("git-lfs") is None, reason="git-lfs is not installed")


def lfs_repo(path: Path) -> Path:
    repo = make_repo(path)
    git(repo, "lfs", "install", "--local")
    git(repo, "lfs", "track", "*.bin")
    git(repo, "add", ".gitattributes")
    git(repo, "commit", "-qm", "lfs")
    return repo


@needs_lfs
def test_an_lfs_extension_in_the_agents_lfsconfig_does_not_break_the_wip_commit(tmp_path: Path) -> None:
    repo = lfs_repo(tmp_path / "repo")
    ext = "\\n".join(['[lfs "extension.foo"]', "\\tclean = cat", "\\tsmudge = cat", "\\tpriority = 0", ""])
    work = f"printf '{ext}' > .lfsconfig && printf 'big data' > new.bin && touch empty.bin"
    make_bot("lfsext", [reply("", shell(work)), reply("", complete())])

    out = run_cli("run", "lfsext", "--json", cwd=repo)

    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    (wip,) = result["wip_commits"]
    pointer = git(repo, "cat-file", "-p", f"{wip}:new.bin")
    assert pointer.startswith("version https://git-lfs.github.com/spec/v1") and "ext-" not in pointer
    oid = pointer.split("oid sha256:")[1].split()[0]
    assert (repo / ".git" / "lfs" / "objects" / oid[:2] / oid[2:4] / oid).read_bytes() == b"big data"
    assert git(repo, "cat-file", "-s", f"{wip}:empty.bin") == "0"  # as git-lfs keeps it


@pytest.fixture
def lfs_server() -> Iterator[tuple[int, list[str]]]:
    """A loopback LFS server that records every request and answers none of them."""
    hits: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            hits.append(self.path)
            self.send_response(500)
            self.end_headers()

        do_GET = do_POST

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1], hits
    server.shutdown()
    server.server_close()


@needs_lfs
def test_the_advice_after_a_refused_lfs_merge_cannot_reach_the_bots_server(
    tmp_path: Path, lfs_server: tuple[int, list[str]]
) -> None:
    port, hits = lfs_server
    repo = lfs_repo(tmp_path / "repo")
    work = (
        f"printf '[lfs]\\n\\turl = http://127.0.0.1:{port}/lfs\\n' > .lfsconfig && printf secret > x.bin"
        ' && git add -A && git commit -qm lfs && rm -rf "$(git rev-parse --git-dir)/lfs/objects"'
    )
    script = [reply("", shell(work)), reply("", complete("done", "merge"))]
    make_bot("lfsurl", script, "merge_unverified = true")

    out = run_cli("run", "lfsurl", "--json", cwd=repo)

    assert out.returncode == 0, out.stderr
    said = json.loads(out.stdout)["action_message"]
    assert "which your LFS store lacks" in said, said
    advised = [c for c in re.findall(r"`([^`]*)`", said) if " merge " in c]
    assert advised, said
    done = subprocess.run(["sh", "-c", advised[0]], cwd=repo, capture_output=True, text=True, timeout=60)
    assert hits == [], f"the advised `{advised[0]}` asked the bot's server: {hits}"
    assert done.returncode == 0, done.stderr
