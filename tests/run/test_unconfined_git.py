"""openbot's own git steps (outside the sandbox) over a run repository the agent could write: a FIFO the
agent planted where git would open it never blocks the run's end or a later run's sweep, and no git or
git-lfs process is left behind."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from openbot import paths
from tests.helpers import (
    complete,
    git,
    make_bot,
    make_repo,
    remove_tree,
    reply,
    run_cli,
    shell,
    start_run,
    wait_for,
)
from tests.run.test_repo_attacks import DROP, python_for_nobody

SECRET = "a-host-file-the-sandbox-cannot-see-5d1c"
# The agent's own git dir is the run repository's: it may write there (its commits need it).
PLANT_STORE = (
    'gd=$(git rev-parse --git-common-dir) && rm -f "$gd/objects/info/alternates"'
    ' && mkfifo "$gd/objects/info/alternates" "$gd/objects/ab"'
)


def processes_naming(path: Path) -> list[int]:
    """Processes whose command line names `path` (git and git-lfs run on the repository by its path)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and entry.name != str(os.getpid()):
            with contextlib.suppress(OSError):
                if str(path).encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
    return found


@pytest.fixture
def tidy(tmp_path: Path) -> Iterator[Path]:
    """Kill what a failing run left blocked under tmp_path (a FIFO's reader), so the suite goes on."""
    yield tmp_path
    for pid in processes_naming(tmp_path):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def run_notices(bot: str) -> list[dict[str, object]]:
    found = []
    for log in paths.bot_home(bot).glob("workspaces/*/runs/*/events.jsonl"):
        found += [e for e in map(json.loads, log.read_text().splitlines()) if e["type"] == "notice"]
    return found


@pytest.mark.skipif(shutil.which("git-lfs") is None, reason="git-lfs is not installed (.ci/run installs it)")
def test_fifos_in_the_run_repository_and_as_lfsconfig_never_block_the_end_of_the_run(tidy: Path) -> None:
    """FIFOs as the run repository's alternates and as a loose object, and `.lfsconfig` a FIFO in a
    checkout whose git runs git-lfs (the WIP commit's clean filter reads it): the run ends at once (it
    waited 600 s and more before), saves the work and leaves no process behind."""
    repo = make_repo(tidy / "repo")
    git(repo, "lfs", "install", "--local")
    git(repo, "lfs", "track", "*.bin")
    git(repo, "add", ".gitattributes")
    git(repo, "commit", "-qm", "lfs")
    work = f"echo x > a.txt && git add a.txt && git commit -qm a && {PLANT_STORE} && mkfifo .lfsconfig"
    work += " && echo data > new.bin && echo more > b.txt"
    make_bot("fifo", [reply("", shell(work)), reply("", complete())])

    out = run_cli("run", "fifo", "--json", cwd=repo, timeout=300)

    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    # The uncommitted work, saved on top of the imported commit; said in full when not (b.txt was missing
    # once, in a full `-n 4` run, and in none of 18 runs since, alone or under load: the run's account is
    # the clue the next time).
    saved = git(repo, "ls-tree", "-r", "--name-only", result["branch"]).split()
    account = f"{saved}\n{git(repo, 'log', '--stat', '-3', result['branch'])}\n{out.stdout}\n{out.stderr}"
    assert "b.txt" in saved and git(repo, "show", f"{result['branch']}:b.txt") == "more", account
    assert git(repo, "log", "-1", "--format=%s", f"{result['branch']}~1") == "a", (
        account
    )  # the commit, imported
    said = " ".join(str(n["message"]) for n in run_notices("fifo"))
    assert "objects/info/alternates" in said and "objects/ab" in said, said
    # No git is left blocked on a FIFO. Waited for, not read at once: the run's own rm of its trash
    # (runsdir.empty_trash_later) and its spare sandbox's init name the repository for a moment after
    # openbot exits and end by themselves; a blocked git would not.
    wait_for(lambda: processes_naming(repo) == [], timeout=30)


def test_a_dead_runs_fifo_never_stalls_the_next_runs_sweep(tidy: Path) -> None:
    """The run dies (SIGKILL) after its agent planted FIFOs in its repository: the next run's sweep
    brings the work home, says what it removed, and the next run ends."""
    repo = make_repo(tidy / "repo")
    work = f"echo x > a.txt && git add a.txt && git commit -qm a && {PLANT_STORE} && touch planted; sleep 60"
    make_bot("victim", [reply("", shell(work))])
    proc = start_run("run", "victim", cwd=repo, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    runs = repo / ".git" / "openbot-worktrees"
    wait_for(lambda: any(runs.glob("victim-*/planted")), timeout=60)
    proc.kill()
    proc.wait()
    make_bot("next", [reply("", complete("nothing"))])

    out = run_cli("run", "next", cwd=repo, timeout=300)

    assert out.returncode == 0, out.stderr
    [swept] = [n for n in run_notices("next") if n["kind"] == "worktree_swept"]
    assert "objects/info/alternates" in str(swept["message"]), swept
    branch = str(swept["data"]["branch"])  # type: ignore[index]
    assert "a" in git(repo, "log", "--format=%s", branch).splitlines()  # the commit, imported
    assert not list(runs.glob("victim-*"))
    wait_for(lambda: processes_naming(repo) == [], timeout=30)


def test_a_submodule_the_agent_linked_out_of_its_checkout_is_never_read(tidy: Path) -> None:
    """The agent makes the submodule's parent directory a link to a host directory its sandbox cannot
    see (`/tmp` is empty there): openbot's WIP step, unconfined, must not commit what is there."""
    lib = make_repo(tidy / "lib", {"lib.txt": "lib v1\n"})
    repo = make_repo(tidy / "repo")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "deps/lib")
    git(repo, "commit", "-qm", "add lib")
    host = tidy / "host"
    (host / "lib").mkdir(parents=True)
    (host / "lib" / "key.txt").write_text(f"{SECRET}\n")
    make_bot("linker", [reply("", shell(f"rm -rf deps && ln -s {host} deps")), reply("", complete())])

    out = run_cli("run", "linker", "--json", cwd=repo)

    assert out.returncode == 0, out.stderr
    for git_dir in (repo / ".git" / "modules" / "deps" / "lib", repo / ".git"):
        objects = subprocess.run(
            ["git", f"--git-dir={git_dir}", "cat-file", "--batch-all-objects", "--batch"],
            capture_output=True,
            check=True,
        ).stdout
        assert SECRET.encode() not in objects, git_dir
    assert "submodule deps/lib: the agent made its path a symlink" in out.stderr, out.stderr


def test_as_an_ordinary_user_fifos_in_the_run_repository_never_block_the_end_of_the_run() -> None:
    """The same as `nobody` owning the repository: no privilege decides it, and the import's git runs as
    that user, so what kills a blocked step must reach its processes without root."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root to drop to nobody")
    python, pythonpath = python_for_nobody()
    top = Path(tempfile.mkdtemp(prefix="openbot-nobody-"))
    try:
        repo, home = make_repo(top / "repo"), top / "home"
        work = f"echo x > a.txt && git add a.txt && git commit -qm a && {PLANT_STORE} && echo more > b.txt"
        script = {"responses": [reply("", shell(work)), reply("", complete())]}
        (home / "bots" / "fifo").mkdir(parents=True)
        (home / "bots" / "fifo" / "script.json").write_text(json.dumps(script))
        (home / "bots" / "fifo" / "config.md").write_text(
            '+++\nmodel = "scripted:script.json"\nsleep_secs = 0\n+++\n\nWork.\n'
        )
        subprocess.run(["chown", "-R", "65534:65534", str(top)], check=True)
        top.chmod(0o755)
        env = {**os.environ, "OPENBOT_HOME": str(home), "HOME": str(home), "PYTHONPATH": pythonpath}
        out = subprocess.run(
            [*DROP, python, "-m", "openbot", "run", "fifo", "--json"],
            cwd=repo, env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        assert out.returncode == 0, out.stderr
        branch = json.loads(out.stdout)["branch"]
        shown = subprocess.run(
            [*DROP, "git", "show", f"{branch}:b.txt"], cwd=repo, capture_output=True, text=True, env=env
        )
        assert shown.stdout == "more\n", shown.stderr
        assert "objects/info/alternates" in out.stderr, out.stderr
        wait_for(lambda: processes_naming(repo) == [], timeout=30)  # as above: the trash's rm ends by itself
    finally:
        for pid in processes_naming(top):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        remove_tree(top)
