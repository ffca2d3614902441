"""Inside a sandbox whose network is a list of hosts: relay TCP from the sandbox's own loopback
(127.0.0.1:PORT, where HTTP(S)_PROXY point) to openbot's proxy on its Unix socket (proxy.py). HTTP clients
speak TCP to a proxy; the sandbox's network namespace has no route anywhere else.

launch.py loads this file by path (standard library only, like landlock.py), binds the port before
Landlock is applied — the command itself may connect to that port only, and bind none — and forks the
relay (`serve`), which dies with the sandbox's PID namespace when the command ends.
"""

from __future__ import annotations

import os
import socket
import threading

PORT = 3128


def listen() -> socket.socket:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", PORT))
    listener.listen(64)
    return listener


def serve(listener: socket.socket, target: str) -> None:
    """Relay every connection to `listener` to the Unix socket `target`, until the process is killed (the
    launcher runs this in a child of its own, inside the walls)."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # never hold the command's output pipe open
        os.dup2(null, fd)
    while True:
        client, _ = listener.accept()
        threading.Thread(target=_pair, args=(client, target), daemon=True).start()


def _pair(client: socket.socket, target: str) -> None:
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(target)
    except OSError:
        client.close()
        upstream.close()
        return
    threading.Thread(target=_copy, args=(upstream, client), daemon=True).start()
    _copy(client, upstream)


def _copy(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    try:
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        pass
