"""Submodules through the real CLI: checked out in the bot's checkout from the user's own module
repositories (no network; `git submodule update --init` in the sandbox finds them there), the bot's
commits and its uncommitted work inside a submodule kept in the user's module repository under an
`openbot/…` ref and reachable from its branch, and nothing else of the user's submodule touched."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.helpers import complete, events, git, make_bot, make_repo, reply, run_cli, sessions, shell


def super_repo(tmp_path: Path) -> Path:
    lib = make_repo(tmp_path / "lib", {"lib.txt": "lib v1\n"})
    repo = make_repo(tmp_path / "repo")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "lib")
    git(repo, "commit", "-qm", "add lib")
    return repo


def commands(bot: str) -> list[dict[str, object]]:
    return [e for s in sessions(bot) for e in events(s) if e["type"] == "command"]


def snapshot(repo: Path) -> dict[str, str]:
    """What of the user's submodule must not change: its refs, HEAD, index and checkout."""
    module = repo / ".git" / "modules" / "lib"
    refs = git(repo, f"--git-dir={module}", "for-each-ref", "--format=%(refname) %(objectname)")
    return {
        "refs": "\n".join(r for r in refs.splitlines() if not r.startswith("refs/heads/openbot/")),
        "HEAD": (module / "HEAD").read_text(),
        "index": (module / "index").read_bytes().hex(),
        "file": (repo / "lib" / "lib.txt").read_text(),
        "status": git(repo, "status", "--porcelain"),
    }


def gitlink(repo: Path, rev: str) -> str:
    return git(repo, "rev-parse", f"{rev}:lib")


def in_module(repo: Path, *args: str) -> str:
    return git(repo, f"--git-dir={repo / '.git' / 'modules' / 'lib'}", *args)


def test_submodules_are_checked_out_and_update_init_works_offline(tmp_path: Path) -> None:
    repo = super_repo(tmp_path)
    look = shell(
        "cat lib/lib.txt && git submodule update --init && git submodule status && git status --short"
    )
    make_bot("subs", [reply("", look), reply("", complete())], "max_iterations = 1")
    out = run_cli("run", "subs", cwd=repo)
    assert out.returncode == 0, out.stderr
    (ran,) = commands("subs")
    output = str(ran["output"])
    assert ran["exit_code"] == 0, output
    assert output.startswith("lib v1") and f" {gitlink(repo, 'HEAD')} lib" in output, output


def test_the_bots_commits_inside_a_submodule_are_kept_and_reachable(tmp_path: Path) -> None:
    repo = super_repo(tmp_path)
    before = snapshot(repo)
    work = shell(
        "cd lib && echo v2 > lib.txt && git commit -qam v2 && cd .. && git add lib && git commit -qm bump"
    )
    make_bot("subcommit", [reply("", work), reply("", complete())], "max_iterations = 1")
    out = run_cli("run", "subcommit", "--json", cwd=repo)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert not result["wip_commits"], result
    branch = result["branch"]
    sub = gitlink(repo, branch)
    assert sub != gitlink(repo, "HEAD")
    assert in_module(repo, "show", f"{sub}:lib.txt") == "v2"  # the commit exists in the user's module repo
    assert in_module(repo, "rev-parse", f"refs/heads/{branch}") == sub  # kept by an openbot/ ref there
    assert snapshot(repo) == before


def test_uncommitted_work_inside_a_submodule_is_wip_committed_there(tmp_path: Path) -> None:
    repo = super_repo(tmp_path)
    before = snapshot(repo)
    make_bot(
        "subdirty",
        [reply("", shell("echo dirty >> lib/lib.txt")), reply("", complete())],
        "max_iterations = 1",
    )
    out = run_cli("run", "subdirty", "--json", cwd=repo)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["wip_commits"], result
    branch = result["branch"]
    sub = gitlink(repo, branch)
    assert in_module(repo, "show", f"{sub}:lib.txt") == "lib v1\ndirty"
    assert in_module(repo, "rev-parse", f"refs/heads/{branch}") == sub
    assert "submodule lib: uncommitted work saved as WIP commit" in out.stderr, out.stderr
    assert snapshot(repo) == before


def test_a_submodule_missing_from_the_clone_is_left_empty_and_said_so(tmp_path: Path) -> None:
    origin = super_repo(tmp_path)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(origin), str(clone))  # submodules not initialised
    make_bot("nosub", [reply("", shell("ls -A lib | wc -l")), reply("", complete())], "max_iterations = 1")
    out = run_cli("run", "nosub", cwd=clone)
    assert out.returncode == 0, out.stderr
    assert "submodule lib: your clone does not have its commit" in out.stderr, out.stderr
    assert str(commands("nosub")[0]["output"]).strip() == "0"


def test_a_gitlink_the_bot_adds_is_never_fetched(tmp_path: Path) -> None:
    repo = super_repo(tmp_path)
    fake = "1" * 40
    work = shell(
        "git config -f .gitmodules submodule.evil.path evil && "
        "git config -f .gitmodules submodule.evil.url http://127.0.0.1:9/evil.git && "
        f"git update-index --add --cacheinfo 160000,{fake},evil && git add .gitmodules && git commit -qm evil"
    )
    make_bot("evil", [reply("", work), reply("", complete())], "max_iterations = 1")
    out = run_cli("run", "evil", "--json", cwd=repo)
    assert out.returncode == 0, out.stderr
    branch = json.loads(out.stdout)["branch"]
    assert git(repo, "rev-parse", f"{branch}:evil") == fake
    assert not (repo / ".git" / "modules" / "evil").exists()
    assert f"submodule evil: the bot's branch names its commit {fake[:12]}, which is not in your clone" in (
        out.stderr
    ), out.stderr


def test_file_names_that_are_not_utf8_do_not_stop_the_checkout(tmp_path: Path) -> None:
    repo = super_repo(tmp_path)
    (repo / os.fsdecode(b"caf\xe9.txt")).write_text("latin-1 name\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a latin-1 file name")
    make_bot("names", [reply("", shell("cat lib/lib.txt")), reply("", complete())], "max_iterations = 1")
    out = run_cli("run", "names", cwd=repo)
    assert out.returncode == 0, out.stderr
    assert str(commands("names")[0]["output"]).strip() == "lib v1"
