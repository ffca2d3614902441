"""Every exit is truthful and leaves the records consistent: a signal during the WIP commit, a full disk,
and the sweep of a dead run that must stop only what that run started."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from openbot import paths
from tests.helpers import (
    complete,
    git,
    make_bot,
    metadata,
    reply,
    run_cli,
    sessions,
    shell,
    start_run,
    tool_started,
    wait_for,
)


def read_lines(proc: subprocess.Popen[str], into: list[str]) -> threading.Thread:
    def pump() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            into.append(line)

    t = threading.Thread(target=pump, daemon=True)
    t.start()
    return t


def run_record(bot: str) -> dict:
    (record,) = paths.bot_home(bot).glob("workspaces/*/runs/*/run.json")
    return json.loads(record.read_text())


def test_sigterm_during_a_long_wip_commit_is_honoured_and_not_completed(repo: Path) -> None:
    # ~100 MB of incompressible data: libgit2 hashes and compresses it for seconds, holding the main thread
    make_bot(
        "big",
        [reply("", shell("head -c 100000000 /dev/urandom > big.bin")), reply("", complete())],
        config="wip_max_file_mb = 200\nwip_max_total_mb = 200",  # the WIP commit takes all of it, slowly
    )
    proc = start_run("run", "big", "--json", cwd=repo)
    lines: list[str] = []
    pump = read_lines(proc, lines)
    wait_for(lambda: any("session completed" in line for line in lines), timeout=60)
    proc.send_signal(signal.SIGTERM)  # the run is now saving the 100 MB as a WIP commit
    stdout, _ = proc.communicate(timeout=60)
    pump.join(5)
    assert proc.returncode == 143, "".join(lines)
    result = json.loads(stdout)
    assert result["status"] == "interrupted" and result["exit_code"] == 143
    assert run_record("big")["status"] == "interrupted"
    # the work is on the branch, or (commit abandoned) recovered by the next run's sweep
    if not result["wip_commits"]:
        assert "abandoned" in result["reason"]
        make_bot("next", [reply("", complete())])
        swept = run_cli("run", "next", cwd=repo)
        # the sweep saves the dead run's work under the default WIP limits: the 100 MB file is named
        assert swept.returncode == 0 and "big.bin" in swept.stderr, swept.stderr
        return
    assert git(repo, "cat-file", "-s", f"{result['branch']}:big.bin") == "100000000"


@pytest.fixture
def small_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """OPENBOT_HOME on a 4 MiB tmpfs of its own (root only: mounting needs CAP_SYS_ADMIN)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root; RLIMIT_FSIZE would give EFBIG, not a full disk")
    mnt = tmp_path / "small"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m,mode=700", "tmpfs", str(mnt)]).returncode:
        pytest.skip("cannot mount a tmpfs here")
    monkeypatch.setenv("OPENBOT_HOME", str(mnt / "home"))
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def fill(mnt: Path) -> None:
    with open(mnt / "filler", "wb") as f:
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        except OSError:
            pass


def test_a_full_disk_ends_the_run_failed_and_records_the_wip_commit(repo: Path, small_home: Path) -> None:
    # The signal to go on is a file in the bot's own checkout: the sandbox hides the test's /tmp.
    wait = "echo work > work.txt; while [ ! -e go ]; do sleep 0.05; done; rm go; echo more output"
    make_bot("disk", [reply("", shell(wait)), reply("", complete())])
    proc = start_run("run", "disk", "--json", cwd=repo)
    wait_for(lambda: tool_started("disk"))
    fill(small_home)  # OPENBOT_HOME's disk is now full; the repository's is not
    (Path(run_record("disk")["workdir"]) / "go").touch()
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 1, stderr
    assert "Traceback" not in stderr
    record = run_record("disk")
    assert record["status"] == "failed" and "No space left" in record["reason"], record
    assert record["exit_code"] == 1 and len(record["wip_commits"]) == 1
    (wip,) = record["wip_commits"]
    assert git(repo, "show", f"{wip}:work.txt") == "work"  # named, and it holds the work
    assert git(repo, "rev-parse", record["branch"]) == wip
    (small_home / "filler").unlink()
    history = run_cli("history", "disk", cwd=repo)
    assert history.returncode == 0 and "running" not in history.stdout, history.stdout
    assert metadata(sessions("disk")[-1])["status"] != "running"  # its final state was written too


def test_the_sweep_stops_only_what_the_dead_run_started(repo: Path) -> None:
    make_bot("victim", [reply("", shell("echo precious > precious.txt; sleep 300"))])
    proc = start_run("run", "victim", cwd=repo, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(lambda: tool_started("victim"))
    workdir = Path(run_record("victim")["workdir"])

    def leftovers() -> list[int]:
        return [p for p in _pids_of("sleep 300") if _cwd(p) == workdir.resolve()]

    wait_for(lambda: bool(leftovers()))
    leftover = leftovers()
    # the user's own process, working in that directory (a shell, an editor): not the run's
    bystander = subprocess.Popen(["sleep", "301"], cwd=workdir, start_new_session=True)
    try:
        proc.kill()
        proc.wait()
        make_bot("next", [reply("", complete())])
        assert run_cli("run", "next", cwd=repo).returncode == 0
        wait_for(lambda: not any(_alive(p) for p in leftover), timeout=10)
        assert bystander.poll() is None  # still running
    finally:
        bystander.kill()
        bystander.wait()


def _pids_of(cmdline: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "cmdline").read_bytes().replace(b"\0", b" ").strip() == cmdline.encode():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _cwd(pid: int) -> Path | None:
    try:
        return Path(os.readlink(f"/proc/{pid}/cwd"))
    except OSError:
        return None


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")
