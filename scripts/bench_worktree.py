"""Time the run repository: its creation against `git worktree add -b` (and a pure-pygit2 checkout),
and bringing a branch of 100 new commits home against a plain `git fetch`.

Builds a repository of N small files in nested directories (one commit), then runs every creation
variant ROUNDS times, interleaved in a rotating order, each into a fresh directory that is removed after
the run (or, with --defer-delete, moved aside until the end, since this disk slows down for a while
after mass deletions), and syncs before each run, so the disk's moods hit all variants alike.
Then, ROUNDS times, two runs each make COMMITS commits (one file changed, one added per commit); one is
brought home by openbot (verified fetch + compare-and-swap, no WIP), the other by a bare `git fetch`
without fsck, in alternating order.

    python scripts/bench_worktree.py [--files 20000] [--rounds 7] [--commits 100] [--tmp /tmp]
                                     [--defer-delete]
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

from openbot.git.home import bring_home
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
            print(f"  {label}: {times[label][-1]:.2f} s", file=sys.stderr, flush=True)
            if trash is not None:
                os.replace(path(), trash / f"{label.split()[0]}-{i}")
            else:
                shutil.rmtree(path())
            detach()
    return times


def make_commits(rr: RunRepo, n: int, salt: str) -> None:
    who = ("-c", "user.name=bench", "-c", "user.email=b@b")
    for k in range(n):
        (rr.path / "d00" / "e00" / "f0.txt").write_text(f"{salt} change {k}\n")
        (rr.path / f"new-{salt}-{k}.txt").write_text(f"{salt} {k}\n" * 20)
        git(rr.path, "add", "-A")
        git(rr.path, *who, "commit", "-q", "-m", f"{salt} commit {k}")


def bench_import(repo: Path, rounds: int, commits: int) -> dict[str, list[float]]:
    """Seconds to bring `commits` new commits home: openbot's verified import vs a plain fetch."""
    info = find_repo(repo)
    assert info is not None
    labels = ("openbot bring_home (fsck, CAS)", "git fetch, no fsck (reference)")
    times: dict[str, list[float]] = {label: [] for label in labels}
    for i in range(rounds):
        runs = [create_run_repo(info, "imp", f"i{i}v{v}") for v in range(2)]
        for v, rr in enumerate(runs):
            make_commits(rr, commits, f"r{i}v{v}")
        for v in (0, 1) if i % 2 == 0 else (1, 0):
            rr = runs[v]
            os.sync()
            t0 = time.perf_counter()
            if v == 0:
                home = bring_home(rr, "openbot: WIP bench")
                assert home.wip is None and home.branch == rr.branch
            else:
                git(repo, "fetch", "-q", "--no-write-fetch-head", str(rr.git_dir), f"{rr.branch}:{rr.branch}")
            times[labels[v]].append(time.perf_counter() - t0)
            print(f"  {labels[v]}: {times[labels[v]][-1]:.3f} s", file=sys.stderr, flush=True)
        for rr in runs:
            remove_run_repo(rr)
    return times


def table(times: dict[str, list[float]]) -> str:
    rows = ["| variant | median s | min s | max s | runs |", "|---|---|---|---|---|"]
    for label, ts in times.items():
        rows.append(f"| {label} | {statistics.median(ts):.3f} | {min(ts):.3f} | {max(ts):.3f} | {len(ts)} |")
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--commits", type=int, default=100)
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
        imports = bench_import(repo, args.rounds, args.commits)
    deletes = "deferred to the end" if args.defer_delete else "between runs"
    print(f"{args.files} files in {args.tmp}, {args.rounds} interleaved rounds, deletes {deletes}")
    print(table(times))
    ratio = statistics.median(times["openbot create_run_repo"]) / statistics.median(
        times["git worktree add -b"]
    )
    print(f"\nopenbot / git worktree add (medians): {ratio:.2f}x\n")
    print(f"Bringing {args.commits} new commits home, {args.rounds} rounds:")
    print(table(imports))


if __name__ == "__main__":
    main()
