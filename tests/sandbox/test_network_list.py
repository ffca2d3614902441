"""`network` as a list of hosts, through the real CLI: the agent's commands, the setup and the check's setup
reach the listed hosts through openbot's proxy and nothing else (docs/SANDBOX.md, "Network by name").
A PEP 503 index on loopback (tests/pkgindex.py) stands in for PyPI; pip installs from it through the proxy."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openbot import paths
from tests import pkgindex
from tests.helpers import complete, make_bot, make_repo, reply, run_cli, shell, walk
from tests.run.test_hostile_files import NOBODY
from tests.run.test_hostile_files import user as user  # the root/nobody fixture

README = Path(__file__).resolve().parents[2] / "README.md"
BACKEND = '''\
"""A build backend of a few lines (the test index has no setuptools): an editable wheel is a .pth."""
import base64, hashlib, os, tomllib, zipfile


def _wheel(directory):
    p = tomllib.load(open("pyproject.toml", "rb"))["project"]
    meta = [f"Metadata-Version: 2.1", f"Name: {p['name']}", f"Version: {p['version']}"]
    for extra, reqs in p.get("optional-dependencies", {}).items():
        meta += [f"Provides-Extra: {extra}"] + [f'Requires-Dist: {r}; extra == "{extra}"' for r in reqs]
    dist = f"{p['name']}-{p['version']}"
    files = {f"{p['name']}.pth": os.path.abspath("src") + "\\n",
             f"{dist}.dist-info/METADATA": "\\n".join(meta) + "\\n",
             f"{dist}.dist-info/WHEEL": "Wheel-Version: 1.0\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"}
    record = []
    with zipfile.ZipFile(os.path.join(directory, f"{dist}-py3-none-any.whl"), "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
            digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
            record.append(f"{name},sha256={digest},{len(text.encode())}")
        z.writestr(f"{dist}.dist-info/RECORD", "\\n".join(record + [f"{dist}.dist-info/RECORD,,"]) + "\\n")
    return f"{dist}-py3-none-any.whl"


def get_requires_for_build_wheel(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _wheel(wheel_directory)


get_requires_for_build_editable = get_requires_for_build_wheel
build_editable = build_wheel
'''
PROJECT = {
    "pyproject.toml": '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["tools"]\n\n'
    '[project]\nname = "app"\nversion = "0.1"\n\n'
    '[project.optional-dependencies]\ntest = ["tinydep", "pytest"]\n',
    "tools/backend.py": BACKEND,
    "src/app/__init__.py": "import tinydep\n\n\ndef double(x):\n    return tinydep.twice(x)\n",
    "tests/test_app.py": "import app\n\n\ndef test_double():\n    assert app.double(21) == 42\n",
    ".gitignore": ".venv/\n",
}
# pip's settings reach the commands by name (PIP_INDEX_URL: the local index instead of PyPI).
PIP = 'env_passthrough = ["PIP_*"]'
PROBES = (
    "import socket\n"
    "def tried(what, f):\n"
    "    try:\n        f(); print(what, 'REACHED')\n"
    "    except OSError as e:\n        print(what, 'failed', type(e).__name__)\n"
    "tried('dns', lambda: socket.getaddrinfo('example.org', 443))\n"
    "tried('tcp', lambda: socket.create_connection(('127.0.0.1', {port}), timeout=5))\n"
    "tried('udp', lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('192.0.2.1', 53)))\n"
    "tried('tcp-out', lambda: socket.create_connection(('192.0.2.1', 443), timeout=5))\n"
    "icmp = lambda kind: socket.socket(socket.AF_INET, kind, 1).sendto(bytes(8), ('192.0.2.1', 0))\n"
    "tried('raw', lambda: icmp(socket.SOCK_RAW))\n"
    "tried('ping', lambda: icmp(socket.SOCK_DGRAM))\n"
)


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheels") / "wheels"
    pkgindex.wheel(out, "tinydep", "1.0", {"tinydep/__init__.py": b"def twice(x):\n    return 2 * x\n"})
    for name in pkgindex.closure(["pytest"]):
        pkgindex.repack(name, out)
    return out


@pytest.fixture
def index(wheels: Path) -> Iterator[tuple[int, list[str]]]:
    with pkgindex.serve(wheels) as served:
        yield served


@pytest.fixture
def other(tmp_path: Path) -> Iterator[tuple[int, list[str]]]:
    """A loopback server no list names: nothing may reach it."""
    with pkgindex.serve(tmp_path / "other" / "wheels") as served:
        yield served


def pip_env(port: int) -> dict[str, str]:
    return {
        "PIP_INDEX_URL": f"http://localhost:{port}/simple",
        "PIP_TRUSTED_HOST": "localhost",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PIP_NO_CACHE_DIR": "1",
    }


def network_events() -> list[dict[str, Any]]:
    found = []
    # walk, not rglob: a finished run's trash in OPENBOT_HOME/trash is deleted by a detached rm meanwhile
    for log in (p for p in walk(paths.home()) if p.name == "events.jsonl"):
        for line in log.read_text().split("\n"):
            if line and json.loads(line)["type"] == "network":
                found.append(json.loads(line))
    return found


def run_openbot(
    user: list[str], *args: str, cwd: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    prefix = NOBODY if user else []
    probe = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-all", "--", sys.executable, "-c", ""]
    if user and subprocess.run([*NOBODY, *probe], capture_output=True).returncode:
        pytest.skip(f"nobody cannot run {sys.executable} inside bwrap (e.g. a venv of a python under /root)")
    if user:
        subprocess.run(["chown", "-R", "65534:65534", user[0]], check=True)
    return subprocess.run(
        [*prefix, sys.executable, "-m", "openbot", *args],
        cwd=cwd, env={**os.environ, **env}, capture_output=True, text=True, timeout=600,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip


@pytest.mark.slow
def test_pip_installs_through_the_proxy_and_the_rest_is_refused(
    user: list[str], tmp_path: Path, index: tuple[int, list[str]], other: tuple[int, list[str]]
) -> None:
    (port, served), (other_port, reached) = index, other
    repo = make_repo((Path(user[0]) if user else tmp_path) / "repo", PROJECT)
    make_bot(
        "lister",
        [
            reply(
                "", shell(f"curl -s http://localhost:{other_port}/x; curl -s http://127.0.0.1:{port}/simple/")
            ),
            reply("", shell(f'python3 -c "{PROBES.format(port=port)}"')),
            reply("", shell("echo '# checked' >> tests/test_app.py && git commit -qam 'a comment'")),
            reply("", complete("done")),
        ],
        f'network = ["localhost:{port}"]\nmax_iterations = 1\n{PIP}\n'
        'setup = ["python3 -m venv .venv", ".venv/bin/python -m pip install -q -e \'.[test]\'"]\n'
        'verify = [".venv/bin/python -m pytest -q"]\n',
    )
    out = run_openbot(user, "run", "lister", "--json", cwd=repo, env=pip_env(port))
    outputs = [str(e.get("output")) for e in _session_events("lister") if e["type"] == "command"]
    assert out.returncode == 0, "\n".join(outputs)
    assert json.loads(out.stdout)["verified"] is True
    assert any(p.startswith("/files/tinydep-1.0") for p in served)  # pip fetched it, twice: setup, check
    assert sum(p.startswith("/files/tinydep") for p in served) == 2
    assert reached == []  # the other loopback port never saw a request
    seen = network_events()
    refused = {(e["host"], e["port"], e["key"]) for e in seen if not e["allowed"]}
    assert ("localhost", other_port, "network") in refused
    assert ("127.0.0.1", port, "network") in refused  # an IP literal, though the port is the index's
    allowed = [e for e in seen if e["allowed"]]
    assert {e["key"] for e in allowed} == {"network", "verify_network"}  # the setup, then the check's
    assert all(e["host"] == "localhost" and e["port"] == port and e["bytes_received"] > 0 for e in allowed)
    commands = [e for e in _session_events("lister") if e["type"] == "command"]
    probe = next(str(c["output"]) for c in commands if "getaddrinfo" in str(c["command"]))
    assert re.search(r"dns failed", probe) and "tcp failed" in probe and "udp failed" in probe, probe
    assert "tcp-out failed" in probe and "raw failed" in probe and "ping failed" in probe, probe
    said = next(str(c["output"]) for c in commands if f"localhost:{other_port}" in str(c["command"]))
    assert "add it to `network`" in said


def _session_events(bot: str) -> list[dict[str, Any]]:
    from tests.helpers import events, sessions

    return [e for s in sessions(bot) for e in events(s)]


@pytest.mark.slow
def test_a_setup_the_agent_edited_cannot_widen_the_list(
    tmp_path: Path, index: tuple[int, list[str]], other: tuple[int, list[str]]
) -> None:
    (port, _), (other_port, reached) = index, other
    repo = make_repo(tmp_path / "repo", {"tools/setup.sh": "true\n"})
    widened = (
        f"curl -s http://localhost:{other_port}/via-proxy; "
        f"curl -s --noproxy '*' http://127.0.0.1:{other_port}/direct; "
        f"HTTPS_PROXY= http_proxy= curl -s http://localhost:{other_port}/unset; exit 0"
    )
    make_bot(
        "widener",
        [
            reply("", shell(f"echo \"{widened}\" > tools/setup.sh && git commit -qam 'my setup'")),
            reply("", complete("done")),
        ],
        f'network = ["localhost:{port}"]\nmax_iterations = 1\n'
        'setup = ["sh tools/setup.sh"]\nverify = ["true"]\n',
    )
    out = run_cli("run", "widener", cwd=repo, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert reached == []
    refused = [e for e in network_events() if not e["allowed"]]
    assert [(e["host"], e["port"], e["key"]) for e in refused] == [
        ("localhost", other_port, "verify_network")
    ]
    # Shown where the user looks: the live view, the session's history, its HTML page.
    line = f"network: localhost:{other_port} refused: localhost:{other_port} is not in the list"
    assert f"✗ {line} (`verify_network` lists what may be reached)" in out.stderr, out.stderr
    history = run_cli("history", "widener", "--session", "1", cwd=repo)
    assert f"[network] {line}" in history.stdout, history.stdout
    page = run_cli("history", "widener", "--session", "1", "--export", "html", cwd=repo)
    assert page.returncode == 0, page.stderr
    html = next(paths.bot_home("widener").rglob("transcript.html")).read_text()
    assert f"localhost:{other_port} refused" in html


@pytest.mark.slow
def test_the_readme_example_bot_runs_to_verified(tmp_path: Path, index: tuple[int, list[str]]) -> None:
    port, served = index
    block = next(b for b in README.read_text().split("```") if "setup_network" in b)
    lines = {ln.split("=")[0].strip(): ln.split("#")[0].strip() for ln in block.splitlines() if "=" in ln}
    assert lines["setup_network"] == 'setup_network = ["pypi"]'
    example = "\n".join(
        [lines["setup"], f'setup_network = ["localhost:{port}"]', lines["verify"], lines["network"]]
    )
    repo = make_repo(tmp_path / "repo", PROJECT)
    make_bot(
        "readme",
        [
            reply("", shell("echo '# more' >> tests/test_app.py && git commit -qam more")),
            reply("", complete()),
        ],
        f"{example}\nmax_iterations = 1\n{PIP}\n",
    )
    out = run_cli("run", "readme", "--json", cwd=repo, env=pip_env(port), timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    assert json.loads(out.stdout)["verified"] is True
    assert sum(p.startswith("/files/tinydep") for p in served) == 2


@pytest.mark.parametrize(
    ("config", "said"),
    [
        ('network = ["pypi.org", "a b"]', "key 'network' has entry 'a b'"),
        ('setup_network = ["*"]', "key 'setup_network' has entry '*'"),
        ("verify_network = true", "key 'verify_network' is true"),
        ('network = ["x:70000"]', "port 70000"),
    ],
)
def test_a_bad_list_is_refused_in_one_line(tmp_path: Path, config: str, said: str) -> None:
    repo = make_repo(tmp_path / "repo")
    bot = make_bot("bad", [reply("", complete())], config)
    out = run_cli("run", "bad", cwd=repo)
    assert out.returncode == 2
    first = out.stderr.strip().splitlines()[0]
    assert str(bot / "config.md") in first and said in first, out.stderr
    assert "Traceback" not in out.stderr


def test_a_bad_home_list_names_the_home_file(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    make_bot("plain", [reply("", complete())])
    (paths.home() / "network.toml").write_text('setup_network = ["ok.example", "no/slash"]\n')
    out = run_cli("run", "plain", cwd=repo)
    assert out.returncode == 2
    assert str(paths.home() / "network.toml") in out.stderr and "'no/slash'" in out.stderr, out.stderr
