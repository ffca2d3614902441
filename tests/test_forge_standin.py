"""tests/forge.py, the loopback stand-in for GitHub's REST API: it answers as GitHub does where openbot's
feedback gathering depends on it (auth, pages, the log redirect, permissions), in process and as a program."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.forge import TOKEN, Forge, forge_server

HERE = Path(__file__).parent
SHA = "c" * 40


def _get(url: str, token: str = TOKEN) -> tuple[Any, dict[str, str]]:
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    with urllib.request.urlopen(req) as r:
        return json.load(r), dict(r.headers)


def test_a_list_pages_with_a_link_header_and_no_token_is_401() -> None:
    with forge_server() as forge:
        n = forge.open_pull("o/r", "openbot/nightly-fixer", SHA)
        for i in range(5):
            forge.add_comment("o/r", n, "alice", f"c{i}")
        page, headers = _get(f"{forge.base}/repos/o/r/issues/{n}/comments?per_page=2")
        assert [c["body"] for c in page] == ["c0", "c1"]
        assert 'page=2>; rel="next"' in headers["link"] and 'page=3>; rel="last"' in headers["link"]
        last, headers = _get(f"{forge.base}/repos/o/r/issues/{n}/comments?per_page=2&page=3")
        assert [c["body"] for c in last] == ["c4"] and 'rel="next"' not in headers["link"]
        pulls, _ = _get(f"{forge.base}/repos/o/r/pulls?head=o:openbot/nightly-fixer&state=open")
        assert [p["head"]["sha"] for p in pulls] == [SHA]
        assert _get(f"{forge.base}/repos/o/r/pulls?head=o:other&state=open")[0] == []
        with pytest.raises(urllib.error.HTTPError) as e:
            _get(f"{forge.base}/repos/o/r/pulls", token="")
        with e.value:
            assert e.value.code == 401 and json.load(e.value)["message"] == "Bad credentials"


def test_a_job_log_is_a_redirect_and_permissions_read_as_github_says() -> None:
    with forge_server() as forge:
        job = forge.add_check("o/r", SHA, "tests", "failure", b"\xff raw bytes\n")
        forge.grant("o/r", "mia", "maintain")
        forge.grant("o/r", "tom", "triage")
        req = urllib.request.Request(
            f"{forge.base}/repos/o/r/actions/jobs/{job}/logs", headers={"Authorization": f"Bearer {TOKEN}"}
        )

        class NoFollow(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, *args: Any) -> None:
                return None

        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.build_opener(NoFollow).open(req)
        e.value.close()
        assert e.value.code == 302
        with urllib.request.urlopen(e.value.headers["location"]) as r:  # a signed URL: no token needed
            assert r.read() == b"\xff raw bytes\n"
        runs, _ = _get(f"{forge.base}/repos/o/r/commits/{SHA}/check-runs")
        assert runs["total_count"] == 1 and runs["check_runs"][0]["conclusion"] == "failure"
        perms = {
            u: _get(f"{forge.base}/repos/o/r/collaborators/{u}/permission")[0] for u in ("mia", "tom", "eve")
        }
        assert {u: (p["permission"], p["role_name"]) for u, p in perms.items()} == {
            "mia": ("write", "maintain"),
            "tom": ("read", "triage"),
            "eve": ("read", "read"),
        }


def test_served_from_a_state_file_it_sees_what_is_added_meanwhile(tmp_path: Path) -> None:
    state = tmp_path / "forge.json"
    script = [sys.executable, str(HERE / "forge.py")]
    subprocess.run([*script, "add", "--state", str(state), "pull", "o/r", "openbot/x", SHA], check=True)
    server = subprocess.Popen([*script, "serve", "--state", str(state)], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        base = server.stdout.readline().strip()
        assert _get(f"{base}/repos/o/r/issues/1/comments")[0] == []
        subprocess.run(
            [*script, "add", "--state", str(state), "comment", "o/r", "1", "bob", "hi"], check=True
        )
        assert [c["body"] for c in _get(f"{base}/repos/o/r/issues/1/comments")[0]] == ["hi"]
    finally:
        server.terminate()
        server.wait()
    assert Forge(state_file=state).state["repos"]["o/r"]["comments"]["1"][0]["user"] == "bob"
