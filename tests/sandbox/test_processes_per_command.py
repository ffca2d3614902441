"""A confined command costs as few processes as its walls allow (issue 36): bwrap, and the command itself
as pid 1 of its own PID namespace — no init of bwrap's beside it, no launcher process left running, no
processes forked to wait for that init. Counted inside the namespace through its own /proc, not timed:
the first command starts its sandbox cold, the next ones take the one started ahead of them."""

from __future__ import annotations

from tests.helpers import complete, events, make_bot, reply, sessions, shell
from tests.sandbox.conftest import User, needs_bwrap

pytestmark = needs_bwrap

# Bash builtins only: the listing is taken while nothing but the command itself runs in the namespace.
LIST = "echo /proc/[0-9]*; read -r name < /proc/1/comm; echo pid 1 is $name"


def test_each_command_is_the_only_process_of_its_namespace(user: User) -> None:
    make_bot("count", [*(reply("", shell(f"{LIST} # {i}")) for i in range(3)), reply("", complete("ok"))])
    out = user.run("run", "count")
    assert out.returncode == 0, out.stderr
    outputs = [e["output"].strip() for e in events(sessions("count")[-1]) if e["type"] == "command"]
    # Before: "/proc/1 /proc/2" and "pid 1 is bwrap" — bwrap's init as pid 1, the command (the launcher,
    # exec'd) as pid 2, and per command two more forks of the launcher to see the init arm.
    assert outputs == ["/proc/1\npid 1 is bash"] * 3, outputs
