"""git-lfs through the real CLI: the bot's checkout holds the LFS files' content, its own commits store
pointers (their objects brought into the user's LFS store), nothing it does can write the user's LFS
objects, and a clone lacking LFS objects is refused before anything is created."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from openbot import paths
from tests.helpers import complete, events, git, make_bot, make_repo, reply, run_cli, sessions, shell

pytestmark = pytest.mark.skipif(
    shutil.which("git-lfs") is None, reason="git-lfs is not installed (.ci/run installs it)"
)
OLD = b"\x00old binary\x00" * 100


def lfs_repo(path: Path) -> Path:
    repo = make_repo(path)
    git(repo, "lfs", "install", "--local")
    git(repo, "lfs", "track", "*.bin")
    (repo / "old.bin").write_bytes(OLD)
    git(repo, "add", ".gitattributes", "old.bin")
    git(repo, "commit", "-qm", "lfs")
    return repo


def lfs_object(repo: Path, pointer: str) -> Path:
    oid = pointer.split("oid sha256:")[1].split()[0]
    return repo / ".git" / "lfs" / "objects" / oid[:2] / oid[2:4] / oid


def commands(bot: str) -> list[dict[str, object]]:
    return [e for s in sessions(bot) for e in events(s) if e["type"] == "command"]


def test_the_bot_sees_lfs_content_and_its_commits_store_pointers(tmp_path: Path) -> None:
    repo = lfs_repo(tmp_path / "repo")
    users_object = lfs_object(repo, git(repo, "cat-file", "-p", "HEAD:old.bin"))
    work = [
        shell("tr -d '\\000' < old.bin | head -c 10"),  # the content, not a pointer
        shell("head -c 5000 /dev/zero | tr '\\0' y > new.bin && git add new.bin && git commit -qm new"),
        # A checkout inside the sandbox smudges from the user's store: a copy, never a link to it.
        shell("rm old.bin && git checkout -- old.bin && git status --short && echo ok"),
        shell(f"echo scribble >> {users_object}"),
    ]
    make_bot("lfsbot", [reply("", *work), reply("", complete())], "max_iterations = 1")
    out = run_cli("run", "lfsbot", "--json", cwd=repo)
    assert out.returncode == 0, out.stderr
    content, commit, checkout, scribble = commands("lfsbot")
    assert content["exit_code"] == 0 and str(content["output"]).strip() == "old binary", content["output"]
    assert commit["exit_code"] == 0, commit["output"]
    assert checkout["exit_code"] == 0 and str(checkout["output"]).strip() == "ok", checkout["output"]
    assert scribble["exit_code"] != 0  # the user's LFS store is not the bot's to write
    result = json.loads(out.stdout)
    assert not result["wip_commits"]
    pointer = git(repo, "cat-file", "-p", f"{result['branch']}:new.bin")  # the bot's own commit
    assert pointer.startswith("version https://git-lfs.github.com/spec/v1"), pointer[:80]
    assert lfs_object(repo, pointer).read_bytes() == b"y" * 5000  # its object is in the user's store
    assert users_object.read_bytes() == OLD and os.stat(users_object).st_nlink == 1
    assert (repo / "old.bin").read_bytes() == OLD and not (repo / "new.bin").exists()


def test_a_clone_lacking_lfs_objects_is_refused_before_anything_exists(tmp_path: Path) -> None:
    origin = lfs_repo(tmp_path / "origin")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    shutil.rmtree(clone / ".git" / "lfs" / "objects")  # as a clone made with GIT_LFS_SKIP_SMUDGE=1
    git(clone, "lfs", "install", "--local")
    make_bot("lfsbot", [reply("", complete())], "max_iterations = 1")
    out = run_cli("run", "lfsbot", cwd=clone)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len([ln for ln in lines if "old.bin" in ln]) == 1 and "git lfs pull" in out.stderr, out.stderr
    assert "Traceback" not in out.stderr and "--resume" not in out.stderr + out.stdout
    assert not (clone / ".git" / "openbot-worktrees").exists()
    assert git(clone, "branch", "--list", "openbot/*") == ""
    assert not list(paths.bot_home("lfsbot").glob("workspaces/*/runs/*")), "no run record"
    assert not (clone / ".git" / "lfs" / "objects").exists()


def test_a_submodule_lacking_lfs_objects_is_left_empty_and_said_so(tmp_path: Path) -> None:
    lib = lfs_repo(tmp_path / "lib")
    repo = make_repo(tmp_path / "repo")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "lib")
    git(repo, "commit", "-qm", "add lib")
    shutil.rmtree(repo / ".git" / "modules" / "lib" / "lfs" / "objects")  # as if never fetched
    make_bot("lfssub", [reply("", shell("ls -A lib | wc -l")), reply("", complete())], "max_iterations = 1")
    out = run_cli("run", "lfssub", cwd=repo)
    assert out.returncode == 0, out.stderr
    assert "submodule lib: its clone lacks the LFS objects of old.bin" in out.stderr, out.stderr
    assert not (repo / ".git" / "modules" / "lib" / "lfs" / "objects").exists()  # nothing written there
    assert str(commands("lfssub")[0]["output"]).strip() == "0"


def test_openbots_check_sees_the_lfs_files_the_bot_committed(tmp_path: Path) -> None:
    repo = lfs_repo(tmp_path / "repo")
    work = shell("head -c 5000 /dev/zero | tr '\\0' y > new.bin && git add new.bin && git commit -qm new")
    check = 'test "$(head -c 3 new.bin)" = yyy && test "$(tr -d \'\\000\' < old.bin | head -c 3)" = old'
    make_bot(
        "lfscheck",
        [reply("", work), reply("", complete())],
        f"verify = [{json.dumps(check)}]\nverify_attempts = 1",
    )
    out = run_cli("run", "lfscheck", "--json", cwd=repo)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["verified"] is True
