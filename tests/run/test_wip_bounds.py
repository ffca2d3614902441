"""What openbot keeps of a run is bounded: the WIP commit takes no huge file, no more than its total, no
build output (each left out is named, in a notice and in the commit's message), and a command's full
output log stops at its cap with a marker."""

from __future__ import annotations

import json
from pathlib import Path

from openbot import paths
from openbot.agent.tools.shell_process import LOG_CAPPED, LOG_MAX_BYTES
from tests.helpers import complete, events, git, make_bot, make_repo, reply, run_cli, sessions, shell


def run_notices(bot: str) -> list[dict[str, object]]:
    [log] = paths.bot_home(bot).glob("workspaces/*/runs/*/events.jsonl")
    return [e for e in map(json.loads, log.read_text().splitlines()) if e["type"] == "notice"]


def test_the_wip_commit_leaves_out_huge_files_what_is_past_its_total_and_build_output(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path / "repo", {"README.md": "# demo\n", "tracked.pyc": "kept: the project tracks it\n"}
    )
    work = (
        "truncate -s 1G sparse.img && for f in a b c; do head -c 400000 /dev/urandom > $f.dat; done"
        " && mkdir -p src/__pycache__ pkg.egg-info .pytest_cache/v .mypy_cache .ruff_cache"
        " && touch src/__pycache__/m.cpython-311.pyc pkg.egg-info/PKG-INFO .pytest_cache/v/x .mypy_cache/y"
        " && touch .ruff_cache/z stray.pyc && echo kept > small.txt && echo changed > tracked.pyc"
    )
    make_bot(
        "big", [reply("", shell(work)), reply("", complete())], "wip_max_file_mb = 0.5\nwip_max_total_mb = 1"
    )

    out = run_cli("run", "big", "--json", cwd=repo)

    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    [wip] = result["wip_commits"]
    committed = set(git(repo, "ls-tree", "-r", "--name-only", wip).splitlines())
    assert committed == {"README.md", "tracked.pyc", "small.txt", "a.dat", "b.dat"}, committed
    assert git(repo, "show", f"{wip}:tracked.pyc") == "changed"
    [notice] = [n for n in run_notices("big") if n["kind"] == "wip_left_out"]
    left = notice["data"]["files"]  # type: ignore[index]
    assert "sparse.img (1.0 GB, over the 0.5 MB a file limit)" in left, left
    assert "c.dat (0.4 MB, past the 1.0 MB limit in all)" in left, left
    # (pkg.egg-info/ is ignored outright, as the setup step's output: not even listed)
    for junk in (
        "src/__pycache__/",
        ".pytest_cache/",
        ".mypy_cache/",
        ".ruff_cache/",
        "stray.pyc",
    ):
        assert f"{junk} (build output)" in left, (junk, left)
    assert "left out of the WIP commit: " in out.stderr
    message = git(repo, "log", "-1", "--format=%B", wip)
    assert (
        "openbot left out of this commit: " in message
        and "sparse.img" in message
        and "__pycache__" in message
    )
    assert (repo / "README.md").read_text() == "# demo\n" and not (repo / "sparse.img").exists()


def test_a_commands_full_output_log_stops_at_its_cap_with_a_marker(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    loud = f"yes {'x' * 999} | head -c {LOG_MAX_BYTES + (8 << 20)}; echo; echo the-end"
    make_bot("loud", [reply("", shell(loud)), reply("", complete())])

    out = run_cli("run", "loud", cwd=repo)

    assert out.returncode == 0, out.stderr
    [command] = [e for e in events(sessions("loud")[0]) if e["type"] == "command"]
    assert command["output_bytes"] > LOG_MAX_BYTES + (8 << 20)
    assert "the-end" in str(command["output"])  # the model still sees the tail
    log = Path(str(command["full_output_path"]))
    assert log.stat().st_size == LOG_MAX_BYTES + len(LOG_CAPPED)
    with log.open("rb") as f:
        f.seek(LOG_MAX_BYTES)
        assert f.read() == LOG_CAPPED
