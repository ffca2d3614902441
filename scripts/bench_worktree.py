"""Time openbot's worktree creation against `git worktree add -b` (and a pure-pygit2 checkout).

Builds a repository of N small files in nested directories (one commit), then runs every variant
ROUNDS times, interleaved in a rotating order, each into a fresh directory that is removed after the
run (or, with --defer-delete, moved aside until the end, since this disk slows down for a while after
mass deletions), and syncs before each run, so the disk's moods hit all variants alike.

    python scripts/bench_worktree.py [--files 20000] [--rounds 7] [--tmp /tmp] [--defer-delete]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from openbot.git.repo import find_repo
from openbot.git.runrepo import create_run_repo, remove_run_repo
from openbot.git.runsdir import RunRepo


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def make_big_repo(root: Path, files: int) -> Path:
    repo = root / "repo"
    for i in range(files):
        d = repo / f"d{i % 20:02d}" / f"e{i // 20 % 50:02d}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"f{i}.txt").write_text(f"file {i}\n" * 3)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=bench", "-c", "user.email=b@b", "commit", "-q", "-m", "big")
    return repo


# A variant makes round i's (timed run, checkout path once it ran, detach from git after deletion).
Variant = tuple[Callable[[], object], Callable[[], Path], Callable[[], object]]


def bench(repo: Path, rounds: int, trash: Path | None) -> dict[str, list[float]]:
    """Seconds per run of each variant; with `trash`, checkouts are moved there and deleted at the end."""
    info = find_repo(repo)
    assert info is not None
    common = info.common_dir
    prune = lambda: git(repo, "worktree", "prune")  # noqa: E731

    def git_add(i: int) -> Variant:
        path = common / "bench-git" / f"w{i}"
        path.parent.mkdir(exist_ok=True)
        return (
            lambda: git(repo, "worktree", "add", "-q", "-b", f"bench/git{i}", str(path), "HEAD"),
            lambda: path,
            prune,
        )

    def pygit2_add(i: int) -> Variant:
        import pygit2

        path = common / "bench-pygit2" / f"w{i}"
        path.parent.mkdir(exist_ok=True)

        def run() -> None:
            r = pygit2.Repository(str(repo))
            ref = r.branches.local.create(f"bench/pg{i}", r.head.peel(pygit2.Commit))
            r.add_worktree(f"pg{i}", str(path), ref)

        return run, lambda: path, prune

    def openbot_add(i: int) -> Variant:
        made: list[RunRepo] = []
        return (
            lambda: made.append(create_run_repo(info, "bench", f"r{i}")),
            lambda: made[0].path,
            lambda: remove_run_repo(made[0]),
        )

    variants: dict[str, Callable[[int], Variant]] = {
        "git worktree add -b": git_add,
        "openbot create_run_repo": openbot_add,
        "pygit2 add_worktree": pygit2_add,
    }
    times: dict[str, list[float]] = {label: [] for label in variants}
    labels = list(variants)
    for i in range(rounds):
        for label in labels[i % 3 :] + labels[: i % 3]:  # rotate, so no variant always goes first
            run, path, detach = variants[label](i)
            os.sync()  # start every run with nothing of the previous one left to write back
            t0 = time.perf_counter()
            run()
            times[label].append(time.perf_counter() - t0)
            if trash is not None:
                os.replace(path(), trash / f"{label.split()[0]}-{i}")
            else:
                shutil.rmtree(path())
            detach()
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument(
        "--tmp", default="/tmp", help="where to build the repository (/dev/shm takes the disk out)"
    )
    ap.add_argument(
        "--defer-delete", action="store_true", help="move checkouts aside, delete them at the end"
    )
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="openbot-bench-", dir=args.tmp) as tmp:
        repo = make_big_repo(Path(tmp), args.files)
        trash = Path(tmp) / "trash" if args.defer_delete else None
        if trash is not None:
            trash.mkdir()
        times = bench(repo, args.rounds, trash)
    deletes = "deferred to the end" if args.defer_delete else "between runs"
    print(f"{args.files} files in {args.tmp}, {args.rounds} interleaved rounds, deletes {deletes}")
    print("| variant | median s | min s | max s | runs |\n|---|---|---|---|---|")
    for label, ts in times.items():
        print(f"| {label} | {statistics.median(ts):.2f} | {min(ts):.2f} | {max(ts):.2f} | {len(ts)} |")


if __name__ == "__main__":
    main()
