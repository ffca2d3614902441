"""Where the agent's connections through a listed network's proxy are told, through the real CLI: each is a
`network` event of the session it happened in (history --session, its HTML page), repeats written together
(bounded), and the run's counts are in run.json, `run --json` and `openbot digest` (docs/SANDBOX.md,
"Network by name")."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openbot import paths
from openbot.netevent import MAX_PLACES
from tests import pkgindex
from tests.helpers import complete, events, make_bot, make_repo, reply, run_cli, sessions, shell, walk


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[int, list[str]]]:
    with pkgindex.serve(tmp_path / "index" / "wheels") as index:
        yield index


@pytest.fixture
def other(tmp_path: Path) -> Iterator[tuple[int, list[str]]]:
    """A loopback server no list names: nothing may reach it."""
    with pkgindex.serve(tmp_path / "other" / "wheels") as index:
        yield index


def _network(events_: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events_ if e["type"] == "network"]


def _run_logs(bot: str) -> list[Path]:
    return [
        p for p in walk(paths.bot_home(bot)) if p.name == "events.jsonl" and p.parent.parent.name == "runs"
    ]


def test_the_agents_connections_are_events_of_its_session_and_counted_in_the_digest(
    tmp_path: Path, served: tuple[int, list[str]], other: tuple[int, list[str]]
) -> None:
    (port, requests), (other_port, reached) = served, other
    repo = make_repo(tmp_path / "repo")
    refused_five = f"for i in 1 2 3 4 5; do curl -s http://localhost:{other_port}/x; done"
    make_bot(
        "caller",
        [
            reply("", shell(f"curl -s http://localhost:{port}/simple/ >/dev/null; {refused_five}")),
            reply("", shell(f"curl -s http://127.0.0.1:{port}/simple/")),
            reply("", complete("done")),
        ],
        f'network = ["localhost:{port}"]\nmax_iterations = 1\n',
    )
    out = run_cli("run", "caller", "--json", cwd=repo, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert requests == ["/simple/"] and reached == []
    (session,) = sessions("caller")
    seen = _network(events(session))
    assert sorted((e["host"], e["port"], e["allowed"], e["connections"]) for e in seen) == sorted([
        ("localhost", port, True, 1),
        ("localhost", other_port, False, 1),
        ("127.0.0.1", port, False, 1),
        ("localhost", other_port, False, 4),  # the repeats, written when the session ended
    ])  # fmt: skip
    assert (seen[-1]["port"], seen[-1]["connections"]) == (other_port, 4)
    allowed = next(e for e in seen if e["allowed"])
    assert allowed["key"] == "network" and allowed["bytes_received"] > 0
    assert all(
        _network(list(map(json.loads, log.read_text().splitlines()))) == [] for log in _run_logs("caller")
    )
    counts = {"allowed": 1, "refused": 6}
    summary = json.loads(out.stdout)["network"]
    assert {k: summary[k] for k in counts} == counts and summary["bytes_received"] > 0
    # The session's history and its HTML page show them; the live view showed the refusals.
    refused = f"network: localhost:{other_port} refused: localhost:{other_port} is not in the list"
    assert f"✗ {refused}" in out.stderr, out.stderr
    history = run_cli("history", "caller", "--session", "1", cwd=repo)
    assert f"[network] {refused}" in history.stdout, history.stdout
    assert f"localhost:{other_port} (4 more connections like it) refused" in history.stdout
    assert f"127.0.0.1:{port} refused" in history.stdout
    page = run_cli("history", "caller", "--session", "1", "--export", "html", cwd=repo)
    assert page.returncode == 0, page.stderr
    html = next(paths.bot_home("caller").rglob("transcript.html")).read_text()
    assert f"localhost:{other_port} refused" in html and f"127.0.0.1:{port} refused" in html
    # The digest counts the run's connections: refused, allowed, bytes.
    digest = json.loads(run_cli("digest", "--json", cwd=repo).stdout)
    (row,) = digest["runs"]
    assert {k: row["network"][k] for k in counts} == counts and digest["totals"]["network"]["refused"] == 6
    md = run_cli("digest", cwd=repo).stdout
    assert "| Network |" in md and "6 refused, 1 allowed" in md and "6 connections refused" in md, md


def test_a_flood_of_connections_is_a_bounded_number_of_events(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    places = MAX_PLACES + 30
    flood = f"for p in $(seq 20001 {20000 + places}); do curl -s http://localhost:$p/; done; true"
    make_bot(
        "flooder",
        [reply("", shell(flood)), reply("", complete("done"))],
        'network = ["localhost:20000"]\nmax_iterations = 1\n',
    )
    out = run_cli("run", "flooder", "--json", cwd=repo, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    (session,) = sessions("flooder")
    seen = _network(events(session))
    assert len(seen) == MAX_PLACES + 2  # one each for MAX_PLACES + 1 places, one for the rest
    assert sum(e["connections"] for e in seen) == places  # every connection counted
    assert seen[-1]["host"] == "*" and seen[-1]["connections"] == places - MAX_PLACES - 1
    assert json.loads(out.stdout)["network"]["refused"] == places


def test_a_resumed_runs_counts_add_to_the_earlier_ones(tmp_path: Path, other: tuple[int, list[str]]) -> None:
    other_port, _ = other
    repo = make_repo(tmp_path / "repo")
    curl = shell(f"curl -s http://localhost:{other_port}/x")
    make_bot(
        "twice",
        [reply("", curl), reply("stopping here"), reply("", curl), reply("", complete("done"))],
        'network = ["localhost:20000"]\nmax_iterations = 1\n',
    )
    first = json.loads(run_cli("run", "twice", "--json", cwd=repo, timeout=300).stdout)
    assert first["status"] == "limit" and first["network"]["refused"] == 1, first
    again = run_cli("run", "twice", "--resume", first["run_id"], "--json", cwd=repo, timeout=300)
    assert json.loads(again.stdout)["network"]["refused"] == 2, again.stdout + again.stderr
    (row,) = json.loads(run_cli("digest", "--json", cwd=repo).stdout)["runs"]
    assert row["network"]["refused"] == 2
