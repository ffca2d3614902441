"""Issue 10: with `network = false`, MPTCP and TCP Fast Open connected over IPv4 and IPv6, UDP and
path-bound Unix sockets were open, and root changed the loopback's MTU. In a network namespace of its
own (and without capabilities) none of that reaches the host. Listeners run in the test, on the host's
loopback; what counts is what arrived there, not the probe's exit code."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import complete, events, git, make_bot, reply, sessions, shell
from tests.sandbox.conftest import User, needs_bwrap

pytestmark = needs_bwrap

# Each probe tries one way out and prints "got through" when its data was accepted (UDP cannot know).
PROBE = """
import socket, sys
kind, host, port = sys.argv[1], sys.argv[2], sys.argv[3]
family = socket.AF_INET6 if ":" in host else socket.AF_INET
if kind == "mptcp":
    s = socket.socket(family, socket.SOCK_STREAM, 262)  # IPPROTO_MPTCP
    s.settimeout(5)
    s.connect((host, int(port)))
    s.sendall(b"mptcp")
elif kind == "tfo":
    s = socket.socket(family, socket.SOCK_STREAM)  # blocking: sendto waits for the handshake
    s.sendto(b"tfo", socket.MSG_FASTOPEN, (host, int(port)))
elif kind == "udp":
    s = socket.socket(family, socket.SOCK_DGRAM)
    for _ in range(20):  # datagrams may be dropped; one arriving is enough
        s.sendto(b"udp", (host, int(port)))
    sys.exit("sent (whether it arrived only the listener knows)")
elif kind == "unix":
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect(host)
    s.sendall(b"unix")
s.close()
print("got through")
"""


class Listeners:
    """TCP, UDP (IPv4 and IPv6) and a path-bound Unix socket on the host, recording what reaches them."""

    def __init__(self, unix_path: Path) -> None:
        self.received: list[bytes] = []
        self.ports: dict[str, int] = {}
        self.unix_path = unix_path
        self._sockets: list[socket.socket] = []
        self._stop = False

    def start(self) -> None:
        for name, family, host in (("4", socket.AF_INET, "127.0.0.1"), ("6", socket.AF_INET6, "::1")):
            try:
                tcp = socket.create_server((host, 0), family=family)
                udp = socket.socket(family, socket.SOCK_DGRAM)
                udp.bind((host, 0))
            except OSError:  # no IPv6 on this machine: those probes are skipped below
                continue
            self.ports[f"tcp{name}"], self.ports[f"udp{name}"] = tcp.getsockname()[1], udp.getsockname()[1]
            self._serve(tcp, stream=True)
            self._serve(udp, stream=False)
        unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        unix.bind(str(self.unix_path))
        self.unix_path.chmod(0o777)  # like an ssh-agent's socket to its own user: connectable
        unix.listen()
        self._serve(unix, stream=True)

    def _serve(self, sock: socket.socket, stream: bool) -> None:
        sock.settimeout(0.2)
        self._sockets.append(sock)

        def loop() -> None:
            while not self._stop:
                try:
                    if stream:
                        conn, _ = sock.accept()
                        conn.settimeout(5)
                        with conn:
                            self.received.append(conn.recv(100) or b"(connected)")
                    else:
                        self.received.append(sock.recv(100))
                except (TimeoutError, OSError):
                    continue

        threading.Thread(target=loop, daemon=True).start()

    def close(self) -> None:
        self._stop = True
        for s in self._sockets:
            s.close()


@pytest.fixture
def listeners(user: User) -> Iterator[Listeners]:
    found = Listeners(user.base / "agent.sock")  # in /tmp, where ssh-agent and friends keep theirs
    found.start()
    yield found
    found.close()


def test_no_way_out_of_the_network_namespace(user: User, listeners: Listeners) -> None:
    (user.repo / "probe.py").write_text(PROBE)
    git(user.repo, "add", "probe.py")
    git(user.repo, "commit", "-qm", "probe")
    py = user.python
    calls = []
    for v, host in (("4", "127.0.0.1"), ("6", "::1")):
        if f"tcp{v}" not in listeners.ports:
            continue
        tcp, udp = listeners.ports[f"tcp{v}"], listeners.ports[f"udp{v}"]
        calls += [
            shell(f"{py} -I probe.py mptcp {host} {tcp}", f"mptcp{v}"),
            shell(f"{py} -I probe.py tfo {host} {tcp}", f"tfo{v}"),
            shell(f"{py} -I probe.py udp {host} {udp}", f"udp{v}"),
        ]
    calls.append(shell(f"{py} -I probe.py unix {listeners.unix_path} 0", "unix"))
    make_bot("leaky", [reply("", *calls), reply("", complete())])
    out = user.run("run", "leaky")
    assert out.returncode == 0, out.stderr
    results = {e["tool_use_id"]: e for e in events(sessions("leaky")[-1]) if e["type"] == "command"}
    assert len(results) == len(calls)
    got_through = sorted(k for k, e in results.items() if "got through" in e["output"])
    assert got_through == [] and listeners.received == []


def test_the_loopback_mtu_of_the_host_stays(user: User) -> None:
    mtu = Path("/sys/class/net/lo/mtu")
    before = mtu.read_text()
    make_bot("mtu", [reply("", shell("ip link set lo mtu 1280", "mtu")), reply("", complete())])
    try:
        out = user.run("run", "mtu")
        after = mtu.read_text()
    finally:
        if mtu.read_text() != before:  # only when the test fails: give the machine its MTU back
            Path("/sys/class/net/lo/mtu").write_text(before)
    assert out.returncode == 0, out.stderr
    assert after == before
