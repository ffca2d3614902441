"""The sandbox modes, enforced for real: real repos, a real linked worktree, real confined processes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from openbot.sandbox import kernel_support, policy_for_run
from tests.helpers import git
from tests.sandbox.conftest import Run, denied, needs_landlock, needs_landlock_net


@needs_landlock
def test_workspace_write_confines_files_to_the_run(run: Run) -> None:
    policy = run.policy("workspace-write")
    assert denied(run.sh(policy, f"touch {run.home}/x"))
    assert denied(run.sh(policy, f"touch {run.repo}/x"))
    assert denied(run.sh(policy, f"echo junk >> {run.repo}/README.md"))
    assert denied(run.sh(policy, f"touch {run.openbot_home}/x"))
    assert denied(run.sh(policy, f"echo junk >> {run.openbot_home}/bots/b/config.md"))
    assert not (run.home / "x").exists() and not (run.repo / "x").exists()
    assert (run.repo / "README.md").read_text() == "# demo\n"

    ok = run.sh(
        policy,
        'echo new > new.txt && echo tmp > "$TMPDIR/t" && echo skill > "$OPENBOT_HOME/bots/b/skills/s.md"',
    )
    assert ok.returncode == 0, ok.stderr
    assert (run.worktree / "new.txt").exists() and (run.tmp / "t").exists() and (run.skills / "s.md").exists()


@needs_landlock
def test_workspace_write_denies_other_worktrees_and_device_nodes(run: Run) -> None:
    other = run.common / "openbot-worktrees" / "other"
    git(run.repo, "worktree", "add", "-q", "-b", "openbot/other", str(other))
    policy = run.policy("workspace-write")
    assert denied(run.sh(policy, f"touch {other}/x"))
    # As root, a block device node in a writable dir would give raw access to the disk.
    assert run.sh(policy, 'mknod "$TMPDIR/disk" b 8 0').returncode != 0
    assert not (run.tmp / "disk").exists()
    assert run.sh(policy, "echo hi > /dev/null && echo hi 2>/dev/null >&2").returncode == 0


@needs_landlock
def test_output_file_outside_the_sandbox_can_be_reopened_when_granted(run: Run) -> None:
    """The shell tool sends output to a log under OPENBOT_HOME; `> /dev/stderr` reopens it by path."""
    policy = run.policy("workspace-write")
    log = run.openbot_home / "out.log"
    cmd = ["bash", "-c", "echo a >&2; echo b >> /dev/stderr"]
    for also, expected in (((), "a\nbash: line 1: /dev/stderr: Permission denied\n"), ((log,), "a\nb\n")):
        with log.open("w") as out:
            subprocess.run(policy.wrap(cmd, also_writable=also), stderr=out, env=policy.env(), timeout=30)
        assert log.read_text() == expected
    assert f"--write={log}" in policy.wrap(cmd, also_writable=(log,))
    assert denied(run.sh(policy, f"touch {run.openbot_home}/other.log"))


@needs_landlock
def test_workspace_write_commits_on_the_bots_branch_only(run: Run) -> None:
    policy = run.policy("workspace-write")
    before_main, before_feature, before_bot = run.sha("main"), run.sha("feature"), run.sha("openbot/t")

    commit = run.sh(policy, "echo change > c.txt && git add -A && git commit -q -m x")
    assert commit.returncode == 0, commit.stderr
    assert run.sha("openbot/t") != before_bot
    assert git(run.repo, "log", "-1", "--format=%s", "openbot/t") == "x"

    # Without main's reflog (pruned, or reflogs off) only the denied refs/heads/main.lock protects main.
    (run.common / "logs" / "refs" / "heads" / "main").unlink()
    for attack in (
        "git branch -f main HEAD",
        "git update-ref refs/heads/main HEAD",
        "git -c core.logAllRefUpdates=false update-ref refs/heads/main HEAD",
        "git branch -f feature HEAD",
        "git checkout -q -b mine",
        "git pack-refs --all",
        "git config user.name mallory",
    ):
        assert run.sh(policy, attack).returncode != 0, attack
    assert (run.sha("main"), run.sha("feature")) == (before_main, before_feature)
    assert not (run.common / "refs" / "heads" / "main.lock").exists()
    assert "mallory" not in (run.common / "config").read_text()

    branch = run.sh(policy, "git checkout -q -b openbot/t-2 && git commit -q --allow-empty -m y")
    assert branch.returncode == 0, branch.stderr


@needs_landlock_net
def test_confined_modes_deny_tcp_unless_network_is_allowed(run: Run, listener: int) -> None:
    connect = f"exec 3<>/dev/tcp/127.0.0.1/{listener}"
    bind = f"{sys.executable} -I -S -c \"import socket; socket.socket().bind(('127.0.0.1', 0))\""
    for mode in ("workspace-write", "read-only"):
        assert denied(run.sh(run.policy(mode), connect)), mode
        assert denied(run.sh(run.policy(mode), bind)), mode
    allowed = run.policy("workspace-write", network=True)
    assert run.sh(allowed, connect).returncode == 0
    assert run.sh(allowed, bind).returncode == 0


@needs_landlock
def test_read_only_reads_everything_and_writes_only_tmp(run: Run) -> None:
    policy = run.policy("read-only")
    assert denied(run.sh(policy, "touch x"))
    assert denied(run.sh(policy, f"touch {run.openbot_home}/bots/b/x"))
    result = run.sh(policy, 'cat README.md && git log --oneline && echo t > "$TMPDIR/t"')
    assert result.returncode == 0, result.stderr
    assert "# demo" in result.stdout and "initial" in result.stdout


@pytest.mark.skipif(kernel_support().landlock_abi < 6, reason="signal scoping needs Landlock ABI 6")
def test_confined_commands_cannot_signal_processes_outside(run: Run) -> None:
    result = run.sh(run.policy("workspace-write"), f"kill -0 {os.getpid()}")
    assert result.returncode != 0 and (
        "Operation not permitted" in result.stderr or "No such process" in result.stderr
    )


@pytest.mark.parametrize("mode", ["workspace-write", "read-only"])
def test_a_confined_command_gets_the_default_signal_dispositions(run: Run, mode: str) -> None:
    # The launcher is Python, which ignores SIGPIPE and SIGXFSZ; the command must not inherit that.
    result = run.sh(
        run.policy(mode),
        'yes | head -1 >/dev/null; echo "yes ended ${PIPESTATUS[0]}"; grep SigIgn /proc/self/status',
    )
    assert result.returncode == 0, result.stderr
    assert "yes ended 141" in result.stdout, result.stdout + result.stderr  # 128 + SIGPIPE
    ignored = int(result.stdout.split("SigIgn:")[1].split()[0], 16)
    assert not ignored & (1 << (13 - 1)) and not ignored & (1 << (25 - 1)), hex(ignored)  # SIGPIPE, SIGXFSZ


def test_danger_full_access_is_unconfined(run: Run, listener: int) -> None:
    policy = run.policy("danger-full-access")
    assert policy.wrap(["bash", "-c", "true"]) == ["bash", "-c", "true"]
    assert run.sh(policy, f"touch {run.home}/x && exec 3<>/dev/tcp/127.0.0.1/{listener}").returncode == 0
    assert (run.home / "x").exists()


@needs_landlock
def test_no_worktree_grants_the_checkout_but_never_its_git_dir(run: Run) -> None:
    """In the user's own checkout `.git` is trusted by the user's git, outside any sandbox."""
    repo = run.repo
    (repo / "src").mkdir()
    (repo / "src" / "a.py").write_text("a = 1\n")
    # A submodule's `.git` file (pointing into .git/modules/) is git's too.
    (repo / ".gitmodules").write_text('[submodule "lib"]\n\tpath = vendor/lib\n')
    (repo / "vendor" / "lib").mkdir(parents=True)
    (repo / "vendor" / "lib" / ".git").write_text("gitdir: ../../.git/modules/lib\n")
    (repo / "vendor" / "lib" / "x.c").write_text("int x;\n")
    os.symlink(run.home, repo / "homelink")
    os.symlink(".git", repo / "gitlink")
    policy = policy_for_run(
        "workspace-write", worktree=repo, common_dir=run.common, worktree_admin_dir=None,
        tmp_dir=run.tmp, skills_dir=run.skills, network=False,
    )  # fmt: skip
    assert repo not in policy.writable and repo / "README.md" in policy.writable
    assert not any(p.is_relative_to(run.common) for p in policy.writable)
    assert policy.may_write(repo / "src" / "new.py") and not policy.may_write(repo / "new.py")
    assert not policy.may_write(repo / ".git" / "config")
    config, head = (run.common / "config").read_bytes(), run.sha("HEAD")

    ok = run.sh(
        policy,
        "echo more >> README.md && echo b > src/b.py && mkdir src/d && echo y >> vendor/lib/x.c"
        ' && echo s > "$OPENBOT_HOME/bots/b/skills/s.md" && echo t > "$TMPDIR/t"',
        cwd=repo,
    )
    assert ok.returncode == 0, ok.stderr
    for attack in (
        "echo x > .git/hooks/post-checkout",
        "echo '[core] fsmonitor = true' >> .git/config",
        "git config core.fsmonitor 'touch /tmp/PWNED'",
        "echo x >> gitlink/config",
        "echo 'gitdir: /tmp/evil' > vendor/lib/.git",
        "touch homelink/x",
        "touch new.txt",
        "mkdir newdir",
        "rm README.md",
        "ln -s .git g2",
        "git add -A && git commit -qm x",
    ):
        assert run.sh(policy, attack, cwd=repo).returncode != 0, attack
    assert (run.common / "config").read_bytes() == config and run.sha("HEAD") == head
    assert not (run.common / "hooks" / "post-checkout").exists() and not (run.home / "x").exists()
    assert (repo / "vendor" / "lib" / ".git").read_text() == "gitdir: ../../.git/modules/lib\n"
    assert not (repo / "new.txt").exists() and (repo / "README.md").read_text() == "# demo\nmore\n"


@needs_landlock
def test_no_worktree_policy_is_the_same_from_the_current_directory(
    run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(run.repo)
    policy = policy_for_run(
        "workspace-write", worktree=None, common_dir=None, worktree_admin_dir=None,
        tmp_dir=run.tmp, skills_dir=None, network=False,
    )  # fmt: skip
    assert policy.writable == (run.tmp, run.repo / "README.md")
    assert denied(run.sh(policy, "echo x >> .git/config", cwd=run.repo))


@needs_landlock
def test_outside_a_repo_the_whole_directory_is_writable(run: Run, tmp_path: Path) -> None:
    """--skip-git-check in a plain directory: there is no git dir to protect."""
    plain = tmp_path / "plain"
    plain.mkdir()
    policy = policy_for_run(
        "workspace-write", worktree=plain, common_dir=None, worktree_admin_dir=None,
        tmp_dir=run.tmp, skills_dir=None, network=False,
    )  # fmt: skip
    assert plain in policy.writable
    assert run.sh(policy, "mkdir d && touch x d/y", cwd=plain).returncode == 0
    assert denied(run.sh(policy, f"touch {run.home}/x"))


@needs_landlock
def test_launcher_fails_closed_and_starts_light(run: Run) -> None:
    wrapped = run.policy("workspace-write").wrap(["true"])
    start = wrapped.index(sys.executable)
    launcher = wrapped[start : start + 4]
    missing_marker = run.home / "ran"
    bad = subprocess.run(
        [*launcher, "--bogus", "--", "touch", str(missing_marker)], capture_output=True, text=True
    )
    assert bad.returncode == 125 and not missing_marker.exists()
    assert subprocess.run([*launcher, "--", "no-such-command-xyz"], capture_output=True).returncode == 127

    # -X importtime on the launcher itself: nothing from openbot's heavy dependencies is loaded.
    traced = subprocess.run(
        [launcher[0], "-X", "importtime", *launcher[1:], "--", "true"], capture_output=True, text=True
    )
    assert traced.returncode == 0 and "ctypes" in traced.stderr
    for heavy in ("typer", "anthropic", "pygit2", "json", "openbot"):
        assert f" {heavy}\n" not in traced.stderr and f" {heavy}." not in traced.stderr, heavy


@needs_landlock
def test_objects_borrowed_through_alternates_stay_readable(run: Run, tmp_path: Path) -> None:
    """A repository that borrows the user's objects (`objects/info/alternates`, as `git clone --shared`
    does) works in the sandbox although the user's repository lies under the hidden /tmp."""
    clone = tmp_path / "borrower"
    git(tmp_path, "clone", "-q", "--shared", str(run.repo), str(clone))
    policy = policy_for_run(
        "workspace-write", worktree=clone, common_dir=None, worktree_admin_dir=clone / ".git",
        tmp_dir=run.tmp, skills_dir=None, network=False,
    )  # fmt: skip
    assert run.repo / ".git" / "objects" in policy.readable
    result = run.sh(policy, "git log --oneline && git cat-file -p HEAD:README.md", cwd=clone)
    assert result.returncode == 0 and "# demo" in result.stdout, result.stderr
