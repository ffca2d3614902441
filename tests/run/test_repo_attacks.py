"""A hostile agent against the user's repository, through `openbot run`: whatever it does, the user's repo
stays `git fsck --strict` clean, every user ref keeps its value, no hook runs, no file outside is written,
and the bot's legitimate work (its commit and its WIP) still arrives on its branch."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from openbot.sandbox import kernel_support
from tests.helpers import (
    complete,
    events,
    git,
    make_bot,
    make_repo,
    remove_tree,
    reply,
    run_cli,
    sessions,
    shell,
)

pytestmark = pytest.mark.skipif(kernel_support().landlock_abi == 0, reason="the kernel has no Landlock")

LEGIT = "echo work > work.txt && git add work.txt && git commit -qm 'legit work'"
ZERO = "0" * 40


def exit_codes(bot: str) -> dict[str, int | None]:
    return {e["tool_use_id"]: e["exit_code"] for e in events(sessions(bot)[-1]) if e["type"] == "command"}


def user_refs(repo: Path) -> list[str]:
    refs = git(repo, "for-each-ref", "--format=%(refname) %(objectname)").splitlines()
    return [r for r in refs if not r.startswith("refs/heads/openbot/")]


def run_attack(repo: Path, attack: str, action: str = "review", env: dict[str, str] | None = None) -> str:
    """One run: a legitimate commit, the attack, uncommitted work; returns the bot's branch."""
    refs = user_refs(repo)
    make_bot(
        "evil",
        [
            reply("", shell(LEGIT, "legit"), shell(attack, "attack"), shell("echo wip > wip.txt", "wip")),
            reply("", complete("done", action)),
        ],
    )
    out = run_cli("run", "evil", "--json", cwd=repo, env=env)
    assert out.returncode == 0, out.stderr
    assert_intact(repo, refs)
    branch: str = json.loads(out.stdout)["branch"]
    assert_bot_work(repo, branch)
    return branch


def assert_intact(repo: Path, refs: list[str]) -> None:
    fsck = subprocess.run(["git", "fsck", "--strict"], cwd=repo, capture_output=True, text=True)
    assert fsck.returncode == 0, fsck.stderr
    assert "error" not in fsck.stderr and "warning" not in fsck.stderr, fsck.stderr
    assert user_refs(repo) == refs
    assert git(repo, "show", "main:README.md") == "# demo"


def assert_bot_work(repo: Path, branch: str) -> None:
    assert git(repo, "log", "-1", "--format=%s", branch).startswith("openbot: WIP")
    assert git(repo, "show", f"{branch}:wip.txt") == "wip"
    assert git(repo, "log", "-1", "--format=%s", f"{branch}^") == "legit work"
    assert git(repo, "rev-parse", f"{branch}~2") == git(repo, "rev-parse", "main")


def loose_object(git_dir: Path, sha: str) -> Path:
    return git_dir / "objects" / sha[:2] / sha[2:]


@pytest.mark.parametrize(
    "attack",
    [
        "rm -rf {git}/objects/*",
        "cp {evil} {readme}",  # the README blob's name, another content
        "echo /tmp > {git}/objects/info/alternates",
        f"mkdir -p {{git}}/refs/heads/openbot/x && echo {ZERO} > {{git}}/refs/heads/openbot/x/y",
        "echo /tmp > $(git rev-parse --git-dir)/objects/info/alternates",  # its own repository: its business
        f"mkdir -p $(git rev-parse --git-dir)/refs/heads/openbot/x && echo {ZERO} > "
        "$(git rev-parse --git-dir)/refs/heads/openbot/x/y",
    ],
    ids=["rm-objects", "replace-object", "alternates", "zero-ref", "own-alternates", "own-zero-ref"],
)
def test_the_users_object_store_and_refs_are_out_of_reach(repo: Path, tmp_path: Path, attack: str) -> None:
    readme = loose_object(repo / ".git", git(repo, "rev-parse", "main:README.md"))
    evil = tmp_path / "evil-object"
    evil.write_bytes(zlib.compress(b"blob 9\x00backdoor\n"))
    command = attack.format(git=repo / ".git", evil=evil, readme=readme)
    run_attack(repo, command)
    assert ("{git}" not in attack) or exit_codes("evil")["attack"] != 0
    assert git(repo, "log", "--all", "--oneline")  # gc, log --all and show-ref keep working
    git(repo, "show-ref")


def test_a_merge_goes_to_the_commit_openbot_imported_even_if_the_branch_moves(
    repo: Path, tmp_path: Path
) -> None:
    """Another process moves the bot's branch right before the merge (here: a `git` on PATH that does it
    whenever openbot merges); main still moves to the commit openbot brought home, never the other one."""
    git(repo, "checkout", "-q", "-b", "attacker")
    (repo / "evil.txt").write_text("evil\n")
    git(repo, "add", "evil.txt")
    git(repo, "commit", "-q", "-m", "evil")
    evil = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "main")
    real, bin_dir = shutil.which("git"), tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git").write_text(
        "#!/bin/sh\n"
        'case " $* " in *" merge "*|*" update-ref "*refs/heads/main*)\n'
        f"  for r in $({real} for-each-ref --format='%(refname)' refs/heads/openbot/); do\n"
        f'    {real} update-ref "$r" {evil}; done;;\nesac\n'
        f'exec {real} "$@"\n'
    )
    (bin_dir / "git").chmod(0o755)
    refs = [r for r in user_refs(repo) if not r.startswith("refs/heads/main ")]
    make_bot(
        "victim",
        [reply("", shell(LEGIT, "legit")), reply("", complete("done", "merge"))],
        "merge_unverified = true",
    )

    out = run_cli("run", "victim", "--json", cwd=repo, env={"PATH": f"{bin_dir}:{os.environ['PATH']}"})

    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["action"] == "merge", result
    assert git(repo, "log", "-1", "--format=%s", "main") == "legit work"
    assert git(repo, "rev-parse", "main") != evil and not (repo / "evil.txt").exists()
    assert (repo / "work.txt").read_text() == "work\n"
    assert [r for r in user_refs(repo) if not r.startswith("refs/heads/main ")] == refs
    git(repo, "fsck", "--strict")


def test_reflog_symlinks_the_agent_plants_are_never_written_through(repo: Path, tmp_path: Path) -> None:
    bashrc, gitconfig = tmp_path / "bashrc", tmp_path / "gitconfig"
    bashrc.write_text("# ~/.bashrc\n")
    gitconfig.write_text("# ~/.gitconfig\n")
    own = "$(git rev-parse --git-dir)"
    attack = (
        f"ln -sf {gitconfig} {repo}/.git/logs/HEAD; "  # the user's repository: refused
        f"mkdir -p {own}/logs/refs/heads/openbot && rm -f {own}/logs/HEAD && "
        f"ln -s {bashrc} {own}/logs/HEAD && "
        f"ln -sf {gitconfig} {own}/logs/refs/heads/$(git symbolic-ref --short HEAD) && "
        f"rm -f {own}/index && ln -s {bashrc} {own}/index"
    )
    run_attack(repo, attack)
    assert bashrc.read_text() == "# ~/.bashrc\n" and gitconfig.read_text() == "# ~/.gitconfig\n"
    assert not (repo / ".git" / "logs" / "HEAD").is_symlink()


def test_hooks_in_the_tree_never_run_when_openbot_merges(repo: Path, tmp_path: Path) -> None:
    ran = tmp_path / "ran"
    ran.mkdir()
    hooks = repo / ".githooks"
    hooks.mkdir()
    for hook in ("post-merge", "post-checkout", "reference-transaction"):
        (hooks / hook).write_text(f"#!/bin/sh\ntouch {ran}/user-{hook} 2>/dev/null; exit 0\n")
        (hooks / hook).chmod(0o755)
    git(repo, "add", ".githooks")
    git(repo, "commit", "-q", "-m", "hooks in the tree")
    git(repo, "config", "core.hooksPath", ".githooks")
    edit = f"printf '#!/bin/sh\\ntouch {ran}/agent-post-merge\\n' > .githooks/post-merge"
    make_bot(
        "hooker",
        [
            reply("", shell(f"{edit} && git add -A && git commit -qm 'edit hook'", "edit")),
            reply("", complete("done", "merge")),
        ],
        "merge_unverified = true",
    )

    out = run_cli("run", "hooker", "--json", cwd=repo)

    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["action"] == "merge", out.stdout
    assert git(repo, "log", "-1", "--format=%s", "main") == "edit hook"
    assert sorted(p.name for p in ran.iterdir()) == []


def test_merge_never_overwrites_a_file_the_user_has_and_git_ignores(repo: Path) -> None:
    (repo / ".gitignore").write_text("*.local\n")
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-q", "-m", "ignore local files")
    (repo / "dev.local").write_text("the user's private settings\n")
    refs = user_refs(repo)
    make_bot(
        "unignore",
        [
            reply(
                "", shell("echo > .gitignore && echo bot > dev.local && git add -A && git commit -qm mine")
            ),
            reply("", complete("done", "merge")),
        ],
        "merge_unverified = true",
    )

    out = run_cli("run", "unignore", "--json", cwd=repo)

    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["action"] == "review" and "dev.local" in result["action_message"]
    assert "\n" not in result["action_message"]
    assert (repo / "dev.local").read_text() == "the user's private settings\n"
    assert user_refs(repo) == refs
    assert git(repo, "show", f"{result['branch']}:dev.local") == "bot"


DROP = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"]


def python_for_nobody() -> tuple[str, str]:
    """An interpreter user 65534 can run (a venv made from a Python under /root is not one), and the
    PYTHONPATH that gives it this checkout's openbot and its dependencies."""
    import pygit2

    import openbot

    path = f"{Path(pygit2.__file__).parent.parent}:{Path(openbot.__file__).parent.parent}"
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    check = "import subprocess, sys; subprocess.run([sys.executable, '-V'], check=True)"
    for python in (sys.executable, f"/usr/bin/{version}", f"/usr/local/bin/{version}"):
        probe = [*DROP, python, "-c", check]
        env = {**os.environ, "PYTHONPATH": path}
        if (
            Path(python).exists()
            and subprocess.run(probe, capture_output=True, cwd="/", env=env).returncode == 0
        ):
            return python, path
    pytest.skip("no Python interpreter that user 65534 can run")


@pytest.fixture
def nobody_repo() -> Iterator[Path]:
    """A repository and OPENBOT_HOME owned by an ordinary user (65534), for runs as that user."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root to drop to nobody")
    top = Path(tempfile.mkdtemp(prefix="openbot-nobody-"))
    try:
        repo = make_repo(top / "repo")
        (top / "home").mkdir()
        subprocess.run(["chown", "-R", "65534:65534", str(top)], check=True)
        top.chmod(0o755)
        yield repo
    finally:
        remove_tree(top)


def test_as_an_ordinary_user_the_users_git_dir_is_as_out_of_reach(
    nobody_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As root the kernel's permission checks never stop a write, as `nobody` owning the repo neither:
    either way only the sandbox keeps the agent out of the user's `.git`."""
    repo, home = nobody_repo, nobody_repo.parent / "home"
    script = {
        "responses": [
            reply(
                "",
                shell(LEGIT, "legit"),
                shell(
                    f"rm -rf {repo}/.git/objects/* || echo /tmp > {repo}/.git/objects/info/alternates",
                    "attack",
                ),
                shell("echo wip > wip.txt", "wip"),
            ),
            reply("", complete("done", "review")),
        ]
    }
    bot = home / "bots" / "evil"
    bot.mkdir(parents=True)
    (bot / "script.json").write_text(json.dumps(script))
    (bot / "config.md").write_text('+++\nmodel = "scripted:script.json"\nsleep_secs = 0\n+++\n\nWork.\n')
    subprocess.run(["chown", "-R", "65534:65534", str(home)], check=True)
    for key, value in {"COUNT": "1", "KEY_0": "safe.directory", "VALUE_0": "*"}.items():
        monkeypatch.setenv(f"GIT_CONFIG_{key}", value)  # root's own git reads the other user's repo
    refs = user_refs(repo)
    python, path = python_for_nobody()
    env = {**os.environ, "OPENBOT_HOME": str(home), "HOME": str(home), "PYTHONPATH": path}
    out = subprocess.run(
        [*DROP, python, "-m", "openbot", "run", "evil", "--json"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert out.returncode == 0, out.stderr
    assert_intact(repo, refs)
    assert_bot_work(repo, json.loads(out.stdout)["branch"])
