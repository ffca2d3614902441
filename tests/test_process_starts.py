"""Every process openbot starts goes through openbot/gate.py: read from the source with `ast`.

A call anywhere else in the package that starts a process — `subprocess.*`, `os.exec*`, `os.spawn*`,
`os.posix_spawn*`, `os.system`, `os.popen`, `os.fork*`, `pty.spawn`/`pty.fork`,
`asyncio.create_subprocess_*`, `anyio.open_process`/`run_process`, the mcp SDK's `stdio_client` — is a
door beside the gate, however it is imported (`from os import execv as go` counts), and so is
`import subprocess` itself (callers name gate.PIPE, gate.TimeoutExpired, gate.Popen instead).

The one exception is openbot/sandbox/launch.py: it is not openbot's process but the sandbox's launcher,
a standalone `python -I -S` script bwrap starts inside the walls, which applies Landlock and execs the
command it was handed — a command the gate already let through as a `Confined` argv.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import openbot

ROOT = Path(openbot.__file__).parent
ALLOWED = ("gate.py", "sandbox/launch.py")
_DECLARE = ("openbot.gate.step", "openbot.gateterms.step")
_SUBPROCESS = {"run", "Popen", "call", "check_call", "check_output", "getoutput", "getstatusoutput"}


def starts_a_process(name: str) -> bool:
    """Whether the fully qualified callable `name` starts a process."""
    module, _, fn = name.rpartition(".")
    top = module.partition(".")[0]
    if module == "subprocess":
        return fn in _SUBPROCESS
    if module == "os":
        return fn.startswith(("exec", "spawn", "posix_spawn", "fork")) or fn in ("system", "popen")
    if module == "pty":
        return fn in ("spawn", "fork")
    if top == "asyncio":
        return fn.startswith("create_subprocess_")
    if top == "anyio":
        return fn in ("open_process", "run_process")
    return top == "mcp" and fn == "stdio_client"


def _aliases(tree: ast.AST) -> dict[str, str]:
    """Local name → what it was imported as, from every import in the module (functions' included)."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                names[a.asname or a.name.partition(".")[0]] = a.name if a.asname else a.name.partition(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                names[a.asname or a.name] = f"{node.module}.{a.name}"
    return names


def _dotted(node: ast.expr, aliases: dict[str, str]) -> str:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return ""
    return ".".join([aliases.get(node.id, node.id), *reversed(parts)])


def doors(root: Path) -> set[tuple[str, str]]:
    """(file under the package, what it does) for every process start and `import subprocess` outside
    the gate."""
    found: set[tuple[str, str]] = set()
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel in ALLOWED:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        aliases = _aliases(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import) and any(a.name == "subprocess" for a in node.names):
                found.add((rel, "import subprocess"))
            elif isinstance(node, ast.ImportFrom) and node.module == "subprocess":
                found.add((rel, "import subprocess"))
            elif isinstance(node, ast.Call) and starts_a_process(name := _dotted(node.func, aliases)):
                found.add((rel, name))
            elif isinstance(node, ast.Call) and _dotted(node.func, aliases) in _DECLARE:
                found.add((rel, "declares a step"))  # the list in gate.py is the whole of what openbot runs
    return found


def test_every_process_start_goes_through_the_gate() -> None:
    # A new process start: declare its step in openbot/gate.py's list and call gate.run/popen/
    # spawn_detached/exec_/stdio_server with it (docs/SANDBOX.md, "Every process openbot starts").
    assert doors(ROOT) == set()


def test_a_planted_process_start_is_caught(tmp_path: Path) -> None:
    """The scan of a copy of the package finds a `subprocess.run` planted in a function, an `os.execv`
    imported under another name, an `import subprocess`, an mcp `stdio_client` and a step declared
    outside gate.py's list."""
    copy = tmp_path / "openbot"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert doors(copy) == set()
    fleet = copy / "run" / "fleet.py"
    fleet.write_text(fleet.read_text() + "\n\ndef planted() -> None:\n    import subprocess\n\n"
                     "    subprocess.run(['true'])\n")  # fmt: skip
    memory = copy / "state" / "memory.py"
    memory.write_text(memory.read_text() + "\nfrom os import execv as go\n\ngo('/bin/true', ['true'])\n")
    hub = copy / "agent" / "tools" / "mcp" / "hub.py"
    hub.write_text(hub.read_text() + "\nfrom mcp import stdio_client\n\nstdio_client(None)\n")
    notify = copy / "run" / "notify.py"
    mine = "\nMINE = gate.step('x', 'y', (gate.From.USER,), gate.Walls.BESIDE)\n"
    notify.write_text(notify.read_text() + mine)
    assert doors(copy) == {
        ("run/fleet.py", "import subprocess"),
        ("run/fleet.py", "subprocess.run"),
        ("state/memory.py", "os.execv"),
        ("agent/tools/mcp/hub.py", "mcp.stdio_client"),
        ("run/notify.py", "declares a step"),
    }


def test_the_scan_knows_each_kind_of_start() -> None:
    starts = ["subprocess.check_output", "os.execvpe", "os.posix_spawnp", "os.spawnlp", "os.system"]
    starts += ["os.popen", "os.forkpty", "pty.spawn", "asyncio.create_subprocess_exec", "anyio.run_process"]
    starts += ["mcp.client.stdio.stdio_client"]
    assert [s for s in starts if not starts_a_process(s)] == []
    assert [
        s for s in ("os.kill", "os.waitpid", "subprocess.PIPE", "os.path.join") if starts_a_process(s)
    ] == []
