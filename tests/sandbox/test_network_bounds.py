"""The proxy of a listed network is bounded and lives no longer than the run, and its list comes from the
bot's config and `$OPENBOT_HOME/network.toml` only, through the real CLI (docs/SANDBOX.md, "Network by
name"). The bounds are set small for the test in openbot's own environment (OPENBOT_PROXY_*)."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openbot import paths
from tests.helpers import complete, events, make_bot, make_repo, reply, run_cli, sessions, shell, walk


def _serve(answer: bytes | None) -> Iterator[int]:
    """A loopback TCP server: each connection gets `answer` once its request is read, then is closed;
    None: it is held, never answered, until the client goes."""
    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []

    def one(conn: socket.socket) -> None:
        with conn:
            conn.recv(65536)
            if answer is None:
                held.append(conn)
                while conn.recv(65536):
                    pass
                return
            try:
                conn.sendall(answer)
            except OSError:
                pass  # the proxy cut it

    def loop() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=one, args=(conn,), daemon=True).start()

    threading.Thread(target=loop, daemon=True).start()
    try:
        yield listener.getsockname()[1]
    finally:
        listener.close()


@pytest.fixture
def holder() -> Iterator[int]:
    yield from _serve(None)


@pytest.fixture
def big() -> Iterator[int]:
    body = b"x" * (4 << 20)
    yield from _serve(b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)


def network_events(bot: str) -> list[dict[str, Any]]:
    """Wherever they were written: a connection ends after its command, maybe after its session."""
    found = []
    for log in (p for p in walk(paths.bot_home(bot)) if p.name == "events.jsonl"):
        found += [e for e in map(json.loads, log.read_text().splitlines()) if e["type"] == "network"]
    return found


def _outputs(bot: str) -> str:
    return "\n".join(str(e.get("output")) for s in sessions(bot) for e in events(s) if e["type"] == "command")


CONNECTS = (
    "import os, socket\n"
    "host, port = os.environ['HTTP_PROXY'][7:].split(':')\n"
    "held = []\n"
    "for i in range(3):\n"
    "    s = socket.create_connection((host, int(port)))\n"
    "    s.sendall(b'CONNECT localhost:{port} HTTP/1.1\\r\\n\\r\\n')\n"
    "    print('answer', i, s.recv(4096).decode().replace(chr(13) + chr(10), ' '))\n"
    "    held.append(s)\n"
)


def test_the_proxy_takes_so_many_connections_at_once(tmp_path: Path, holder: int) -> None:
    repo = make_repo(tmp_path / "repo", {"connects.py": CONNECTS.format(port=holder)})
    make_bot(
        "many",
        [reply("", shell("python3 connects.py")), reply("", complete("done"))],
        f'network = ["localhost:{holder}"]\nmax_iterations = 1\n',
    )
    out = run_cli("run", "many", cwd=repo, env={"OPENBOT_PROXY_MAX_CONNECTIONS": "2"}, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    said = _outputs("many")
    assert "answer 0 HTTP/1.1 200" in said and "answer 1 HTTP/1.1 200" in said, said
    assert "answer 2 HTTP/1.1 503" in said and "more than 2 connections at once" in said, said
    refused = [e for e in network_events("many") if not e["allowed"]]
    assert [(e["host"], e["reason"]) for e in refused] == [("*", "more than 2 connections at once")]


def test_the_proxy_cuts_a_connection_past_its_bytes(tmp_path: Path, big: int) -> None:
    repo = make_repo(tmp_path / "repo")
    make_bot(
        "reader",
        [reply("", shell(f"curl -s http://localhost:{big}/ | wc -c")), reply("", complete("done"))],
        f'network = ["localhost:{big}"]\nmax_iterations = 1\n',
    )
    limit = 1 << 20
    out = run_cli("run", "reader", cwd=repo, env={"OPENBOT_PROXY_MAX_BYTES": str(limit)}, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    got = int(_outputs("reader").split()[0])
    assert limit // 2 < got < 4 << 20  # the proxy copies at most 64 KiB past the limit
    (seen,) = network_events("reader")
    assert seen["allowed"] and seen["reason"] == f"cut at {limit} bytes", seen
    assert limit <= seen["bytes_sent"] + seen["bytes_received"] <= limit + (64 << 10)


def test_the_proxy_cuts_an_idle_connection_and_ends_with_the_run(tmp_path: Path, holder: int) -> None:
    repo = make_repo(tmp_path / "repo")
    make_bot(
        "idler",
        [
            reply("", shell("ls -d /tmp/openbot-net-*/proxy.sock")),
            reply("", shell(f"curl -s http://localhost:{holder}/; echo curl exit $?")),
            reply("", complete("done")),
        ],
        f'network = ["localhost:{holder}"]\nmax_iterations = 1\n',
    )
    out = run_cli("run", "idler", cwd=repo, env={"OPENBOT_PROXY_IDLE_SECS": "1"}, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    said = _outputs("idler")
    assert "curl exit 52" in said, said  # an empty reply: the proxy hung up on a silent server
    (seen,) = network_events("idler")
    assert seen["allowed"] and seen["reason"] == "cut after 1 s idle", seen
    socket_path = Path(said.split()[0])
    assert socket_path.name == "proxy.sock" and not socket_path.parent.exists()  # gone with the run


def test_the_list_comes_from_the_bot_and_the_home_file_only(tmp_path: Path, holder: int, big: int) -> None:
    """The home file lists the one port; the agent writes a wider list everywhere it can (its checkout,
    the committed bot's config, the home file), and its check's setup still reaches only that port."""
    (paths.home() / "network.toml").parent.mkdir(parents=True, exist_ok=True)
    (paths.home() / "network.toml").write_text(f'network = ["localhost:{holder}"]\n')
    repo = make_repo(tmp_path / "repo", {"setup.sh": "true\n"})
    wider = f'network = ["localhost:{big}"]\\nsetup_network = true\\nverify_network = ["localhost:{big}"]'
    widen = (
        f"printf '{wider}\\n' > network.toml && mkdir -p .openbot/bots/homelist"
        f" && printf '+++\\n{wider}\\n+++\\nWork.\\n' > .openbot/bots/homelist/config.md"
        f" && echo 'curl -s -o /dev/null -w \"%{{http_code}}\" http://localhost:{big}/' > setup.sh"
        " && git add -A && git commit -qm wider"
        f"; printf '{wider}\\n' > {paths.home() / 'network.toml'} || echo home file not writable"
    )
    make_bot(
        "homelist",
        [reply("", shell(widen)), reply("", complete("done"))],
        'max_iterations = 1\nsetup = ["sh setup.sh"]\nverify = ["true"]\n',
    )
    out = run_cli("run", "homelist", cwd=repo, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "home file not writable" in _outputs("homelist")
    assert (paths.home() / "network.toml").read_text() == f'network = ["localhost:{holder}"]\n'
    refused = [(e["host"], e["port"], e["key"]) for e in network_events("homelist") if not e["allowed"]]
    assert refused == [("localhost", big, "verify_network")]  # the check's setup, on the agent's script
