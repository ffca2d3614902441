"""Time openbot's worktree creation against `git worktree add -b` (and a pure-pygit2 checkout).

Builds a repository of N small files in nested directories (one commit), then runs every variant
ROUNDS times, interleaved in a rotating order, each into a fresh directory that is removed (and synced)
after the run, so a slowdown of the disk hits all variants alike; prints median, min and max.

    python scripts/bench_worktree.py [--files 20000] [--rounds 7] [--tmp /tmp]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from openbot.repo import find_repo
from openbot.worktree import create_worktree, remove_worktree


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


def bench(repo: Path, rounds: int) -> dict[str, list[float]]:
    info = find_repo(repo)
    assert info is not None
    common = info.common_dir

    def git_add(i: int) -> tuple[Callable[[], object], Callable[[], object]]:
        path = common / "bench-git" / f"w{i}"
        path.parent.mkdir(exist_ok=True)
        run = lambda: git(repo, "worktree", "add", "-q", "-b", f"bench/git{i}", str(path), "HEAD")  # noqa: E731

        def cleanup() -> None:
            shutil.rmtree(path)
            git(repo, "worktree", "prune")

        return run, cleanup

    def pygit2_add(i: int) -> tuple[Callable[[], object], Callable[[], object]]:
        import pygit2

        path = common / "bench-pygit2" / f"w{i}"
        path.parent.mkdir(exist_ok=True)

        def run() -> None:
            r = pygit2.Repository(str(repo))
            ref = r.branches.local.create(f"bench/pg{i}", r.head.peel(pygit2.Commit))
            r.add_worktree(f"pg{i}", str(path), ref)

        def cleanup() -> None:
            shutil.rmtree(path)
            git(repo, "worktree", "prune")

        return run, cleanup

    def openbot_add(i: int) -> tuple[Callable[[], object], Callable[[], object]]:
        made = []
        return (lambda: made.append(create_worktree(info, "bench", f"r{i}"))), (
            lambda: remove_worktree(made[0], "openbot: WIP bench")
        )

    variants = {
        "git worktree add -b": git_add,
        "openbot create_worktree": openbot_add,
        "pygit2 add_worktree": pygit2_add,
    }
    times: dict[str, list[float]] = {k: [] for k in variants}
    labels = list(variants)
    for i in range(rounds):
        for label in labels[i % 3 :] + labels[: i % 3]:  # rotate, so no variant always goes first
            make = variants[label]
            run, cleanup = make(i)
            t0 = time.perf_counter()
            run()
            times[label].append(time.perf_counter() - t0)
            cleanup()
            os.sync()  # flush this round's deletions so they are not billed to the next variant
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument(
        "--tmp", default="/tmp", help="where to build the repository (/dev/shm takes the disk out)"
    )
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="openbot-bench-", dir=args.tmp) as tmp:
        repo = make_big_repo(Path(tmp), args.files)
        times = bench(repo, args.rounds)
    print(
        f"{args.files} files in {args.tmp}, {args.rounds} interleaved rounds, python {sys.version.split()[0]}"
    )
    print("| variant | median s | min s | max s | runs |\n|---|---|---|---|---|")
    for label, ts in times.items():
        print(f"| {label} | {statistics.median(ts):.2f} | {min(ts):.2f} | {max(ts):.2f} | {len(ts)} |")


if __name__ == "__main__":
    main()
