"""The setup step gets more than the agent (network, a cache later runs use), so it may only run what the
user controls: a resume (whose checkout holds the agent's commits) and a `--no-worktree` run (whose
checkout holds what earlier runs left) run the setup with the agent's own network rule and no cache; the
cache is per repository; a damaged cache entry is a notice. Real runs; a host listener on loopback."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from openbot import paths
from tests.helpers import complete, events, make_bot, make_repo, reply, run_cli, sessions, shell

SETUP = "setup = ['sh tools/setup.sh']\nsetup_network = true\nmax_iterations = 1"


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A host TCP listener: a connection made to it stays in its backlog, so after the run a
    non-blocking accept says whether anything connected — no waiting on clocks."""
    sock = socket.create_server(("127.0.0.1", 0))
    sock.setblocking(False)
    yield sock
    sock.close()


def connected(sock: socket.socket) -> bool:
    try:
        sock.accept()[0].close()
    except BlockingIOError:
        return False
    return True


def agents_setup(port: int) -> str:
    """What the agent writes into the setup script: phone home, and leave a file in the cache."""
    return (
        f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 5)\" && echo PHONED\n"
        'echo poison > "$PIP_CACHE_DIR/poison" && echo CACHED\n'
        "true\n"
    )


def setup_outputs(bot: str) -> list[str]:
    return [
        str(e["output"])
        for s in sessions(bot)
        for e in events(s)
        if e["type"] == "command" and str(e["tool_use_id"]).startswith("setup-")
    ]


def test_a_resume_never_runs_the_agents_edited_setup_with_network_or_the_cache(
    tmp_path: Path, listener: socket.socket
) -> None:
    repo = make_repo(tmp_path / "repo", {"tools/setup.sh": "echo the users setup\n"})
    port = listener.getsockname()[1]
    edit = {"command": "create", "path": "tools/setup.sh", "file_text": agents_setup(port)}
    bot = make_bot(
        "setter", [reply("", {"name": "edit", "input": edit}, shell("git commit -qam s")), reply("")], SETUP
    )
    first = json.loads(run_cli("run", "setter", "--json", cwd=repo).stdout)
    assert first["exit_code"] == 3
    assert not connected(listener)
    (bot / "script.json").write_text(json.dumps({"responses": [reply("", complete())]}))

    out = run_cli("run", "setter", "--resume", first["run_id"], "--json", cwd=repo)
    assert out.returncode == 0, out.stderr
    said = setup_outputs("setter")
    assert "the users setup" in said[0] and "PHONED" not in said[-1] and "CACHED" not in said[-1], said
    assert not connected(listener)
    assert not list(paths.bot_home("setter").rglob("poison"))
    assert "the checkout holds the agent's work: no setup network, no cache" in out.stderr


def test_a_no_worktree_run_never_gives_the_checkouts_setup_network_or_the_cache(
    tmp_path: Path, listener: socket.socket
) -> None:
    repo = make_repo(tmp_path / "repo", {"tools/setup.sh": "echo the users setup\n"})
    (repo / "tools" / "setup.sh").write_text(agents_setup(listener.getsockname()[1]))  # an earlier run's
    make_bot("inplace", [reply("", complete())], SETUP)
    out = run_cli("run", "inplace", "--no-worktree", "--json", cwd=repo)
    assert out.returncode == 0, out.stderr
    [said] = setup_outputs("inplace")
    assert "PHONED" not in said and "CACHED" not in said, said
    assert not connected(listener)
    assert not list(paths.bot_home("inplace").rglob("poison"))


def test_the_setup_cache_is_per_repository(tmp_path: Path) -> None:
    setup = 'setup = [\'ls "$PIP_CACHE_DIR"; echo planted > "$PIP_CACHE_DIR/planted.whl"\']'
    make_bot("shared", [reply("", complete())], f"max_iterations = 1\n{setup}")
    for name in ("one", "two"):
        assert run_cli("run", "shared", cwd=make_repo(tmp_path / name)).returncode == 0
    first, second = setup_outputs("shared")
    assert "planted.whl" not in second  # repository two never sees what repository one's setup left


def test_a_damaged_cache_entry_is_a_notice_and_made_anew(repo: Path) -> None:
    make_bot("damaged", [reply("", complete())], "max_iterations = 1\nsetup = ['echo \"$PIP_CACHE_DIR\"']")
    assert run_cli("run", "damaged", cwd=repo).returncode == 0
    pip = Path(setup_outputs("damaged")[0].strip())
    pip.rmdir()
    pip.symlink_to(pip.parent / "gone")  # a broken link where the pip cache belongs
    out = run_cli("run", "damaged", cwd=repo)
    assert out.returncode == 0, out.stderr
    assert "internal error" not in out.stderr and "Traceback" not in out.stderr
    assert pip.is_dir() and not pip.is_symlink()
    notices = [e for s in sessions("damaged") for e in events(s) if e["type"] == "notice"]
    assert any(n["kind"] == "setup_cache_repaired" and str(pip) in n["message"] for n in notices)


def test_a_no_worktree_agents_edit_of_the_setup_is_not_trusted_when_carried_by_with_changes(
    tmp_path: Path, listener: socket.socket
) -> None:
    """A `--no-worktree` agent edits the setup script and leaves it uncommitted; the user's next run
    `--with-changes` carries it into a new checkout, whose setup must not get the network or the cache."""
    repo = make_repo(tmp_path / "repo", {"tools/setup.sh": "echo the users setup\n"})
    edit = {
        "command": "create",
        "path": "tools/setup.sh",
        "file_text": agents_setup(listener.getsockname()[1]),
    }
    make_bot("inplace", [reply("", {"name": "edit", "input": edit}), reply("", complete())], SETUP)
    first = run_cli("run", "inplace", "--no-worktree", "--json", cwd=repo)
    assert first.returncode == 0, first.stderr
    assert "PHONED" in (repo / "tools" / "setup.sh").read_text()  # left in the user's checkout

    make_bot("carried", [reply("", complete())], SETUP)
    out = run_cli("run", "carried", "--with-changes", "--json", cwd=repo)
    assert out.returncode == 0, out.stderr
    [said] = setup_outputs("carried")
    assert "PHONED" not in said and "CACHED" not in said, said
    assert not connected(listener)
    assert not list(paths.bot_home("carried").rglob("poison"))
    assert "uncommitted change(s) --with-changes carried: no setup network, no cache" in out.stderr


def test_a_with_changes_run_with_nothing_to_carry_keeps_the_setups_network(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    make_bot(
        "clean", [reply("", complete())], "setup = ['echo \"cache=$PIP_CACHE_DIR\"']\nmax_iterations = 1"
    )
    out = run_cli("run", "clean", "--with-changes", cwd=repo)
    assert out.returncode == 0, out.stderr
    [said] = setup_outputs("clean")
    assert "cache=/" in said and "no setup network" not in out.stderr
