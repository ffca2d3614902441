"""Issue 10: a command used ioctl(TIOCSTI) on openbot's terminal (root may do it on any tty) to type a
line into openbot's inbox and, after openbot exited, into the user's shell. The sandbox gives commands a
new session without a controlling terminal, a /dev with a devpts of its own, and no capabilities."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import termios
import threading

from tests.helpers import complete, events, make_bot, reply, sessions, shell
from tests.sandbox.conftest import User, needs_bwrap

pytestmark = needs_bwrap

# Types a line into every terminal within reach: /dev/tty, the pty openbot runs on (by its path, as
# root could), every inherited fd, and fds 0-2 of each ancestor it can see. The line is built at run
# time so that the command text (which openbot echoes to the terminal) does not contain it.
INJECT = """
import fcntl, os, sys, termios
line = ("echo " + "INJ" + "ECTED" + chr(10)).encode()
tried, typed = [], []
def inject(fd, what):
    tried.append(what)
    try:
        for b in line:
            fcntl.ioctl(fd, termios.TIOCSTI, bytes([b]))
        typed.append(what)
    except OSError:
        pass
for fd in range(256):
    try:
        if os.isatty(fd):
            inject(fd, f"fd {fd}")
    except OSError:
        pass
paths = ["/dev/tty", sys.argv[1]]
pid = os.getppid()
while pid > 1:
    paths += [f"/proc/{pid}/fd/{n}" for n in range(3)]
    pid = int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
for path in paths:
    try:
        fd = os.open(path, os.O_RDWR | os.O_NOCTTY)
    except OSError:
        continue
    try:
        if os.isatty(fd):
            inject(fd, path)
    finally:
        os.close(fd)
print("tried:", tried, "typed into:", typed)
"""


def test_a_command_cannot_type_into_openbots_terminal(user: User) -> None:
    master, slave = pty.openpty()
    tty_path = os.ttyname(slave)
    os.chmod(tty_path, 0o620)  # as a login terminal is: its owner (root) reads, the tty group writes
    script = user.openbot_home / "inject.py"
    script.parent.mkdir(parents=True)
    script.write_text(INJECT)
    make_bot(
        "typist",
        [reply("", shell(f"{user.python} -I {script} {tty_path}", "inject")), reply("", complete())],
    )
    output = bytearray()

    def drain() -> None:  # openbot writes its live view to the terminal: keep reading it
        while True:
            try:
                if select.select([master], [], [], 0.2)[0]:
                    chunk = os.read(master, 4096)
                    if not chunk:
                        return
                    output.extend(chunk)
            except OSError:
                return

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        # openbot on the pty, which `setsid -c` makes its controlling terminal, as in a login session.
        proc = user.start("run", "typist", ctty=True, stdin=slave, stdout=slave, stderr=slave)
        proc.wait(timeout=120)
        pending = struct.unpack("i", fcntl.ioctl(slave, termios.FIONREAD, b"\0\0\0\0"))[0]
    finally:
        os.close(slave)
        reader.join(timeout=5)
        os.close(master)
    assert proc.returncode == 0, output.decode(errors="replace")
    session = events(sessions("typist")[-1])
    [command] = [e for e in session if e["type"] == "command"]
    assert "tried:" in command["output"] and "typed into: []" in command["output"], command["output"]
    assert [e for e in session if e["type"] == "user_input"] == []  # nothing reached openbot's inbox
    assert pending == 0 and b"INJECTED" not in output  # nor is anything left for the user's shell
