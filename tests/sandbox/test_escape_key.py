"""Issue 10: as root, a command read `/proc/<openbot pid>/environ` — the model key. openbot makes itself
non-dumpable (reading its environ then needs CAP_SYS_PTRACE) and no confined command keeps a capability;
in namespaces openbot's pid is not even in the command's /proc."""

from __future__ import annotations

import secrets

import pytest

from tests.helpers import complete, events, make_bot, reply, sessions, shell
from tests.sandbox.conftest import User, needs_bwrap

# Finds openbot's pid the way an agent would (its run record, under OPENBOT_HOME, is readable), then
# tries its environ. Exit 42: the key was read.
STEAL = """
import glob, json, sys
[record] = glob.glob(sys.argv[1] + "/bots/thief/workspaces/*/runs/*/run.json")
pid = json.load(open(record))["pid"]
try:
    environ = open(f"/proc/{pid}/environ", "rb").read()
except OSError as e:
    sys.exit(f"openbot's environ (pid {pid}): {e}")
sys.exit(42 if b"ANTHROPIC_API_KEY=sk-ant-escape-test-" in environ else f"no key in pid {pid}'s environ")
"""


@pytest.mark.parametrize(
    "walls",
    [
        pytest.param({}, marks=needs_bwrap, id="namespaces"),
        # Without bubblewrap, sandbox_fallback = "warn" runs Landlock only: the key must still be safe.
        pytest.param({"OPENBOT_SANDBOX_FORCE_UNAVAILABLE": "bwrap"}, id="landlock-only"),
    ],
)
def test_the_key_cannot_be_read_from_openbots_process(user: User, walls: dict[str, str]) -> None:
    (user.base / "openbot-home").mkdir()
    steal = user.openbot_home / "steal.py"
    steal.write_text(STEAL)
    make_bot(
        "thief",
        [reply("", shell(f"{user.python} -I {steal} {user.openbot_home}", "steal")), reply("", complete())],
        config='sandbox_fallback = "warn"',
    )
    key = f"sk-ant-escape-test-{secrets.token_hex(8)}"
    out = user.run("run", "thief", env={"ANTHROPIC_API_KEY": key, **walls})
    assert out.returncode == 0, out.stderr
    [command] = [e for e in events(sessions("thief")[-1]) if e["type"] == "command"]
    assert command["exit_code"] not in (0, 42), command["output"]
    assert "environ" in command["output"]  # it got as far as trying
