"""A clean checkout of a run's committed work, for openbot's own verification, and the note that records it.

clean_checkout   the run branch's tip (read as a plain file, never through a symlink) is imported
                 into the user's repository the way bringing it home does (carrier.py: every object
                 re-hashed, no ref written), then checked out from a fresh git dir of openbot's that
                 borrows the user's objects, in a directory the agent cannot reach. Nothing of the
                 run repository but object content is read: not its index, config, hooks or files.
add_note         `refs/notes/openbot` in the user's repository: "Verified-by: openbot; …" on the sha.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from openbot.errors import GitError
from openbot.git import lfs, repodrivers, submodules, userrepo
from openbot.git.carrier import fetch, has_commit, make_carrier, read_tip
from openbot.git.gitcmd import rmtree, run_git
from openbot.git.runrepo import init_git_dir
from openbot.git.runsdir import RunRepo

NOTES_REF = "refs/notes/openbot"


def tip_of(rr: RunRepo) -> str:
    """The commit the run's branch names now (where the run started when it names none)."""
    return read_tip(rr.git_dir, rr.branch) or rr.home_tip or rr.base_commit


def clean_checkout(rr: RunRepo, into: Path) -> tuple[str, Path, Path, dict[str, str]]:
    """Check the branch tip out below `into` (an empty directory of openbot's): (sha, checkout, git dir,
    the user's drivers left off because they would run a file of the tip: repodrivers.py)."""
    tip = tip_of(rr)
    if not has_commit(rr.common_dir, tip):
        carrier = into / "carry"
        try:
            make_carrier(carrier, rr.base_commit, b"")
            fetch(rr.common_dir, carrier, [tip], [rr.git_dir / "objects", rr.common_dir / "objects"])
        finally:
            rmtree(carrier)
    _import_lfs(rr, tip)
    git_dir, checkout = into / "checkout.git", into / "checkout"
    init_git_dir(git_dir, userrepo.config(rr.common_dir, git_dir=True), rr.common_dir, tip)
    checkout.mkdir()
    (checkout / ".git").write_text(f"gitdir: {git_dir}\n", encoding="utf-8")
    git = (f"--git-dir={git_dir}", f"--work-tree={checkout}")
    drivers = repodrivers.checkout_drivers(rr.common_dir, tip)  # never the agent's files beside the walls
    off = repodrivers.off_options(drivers)
    run_git(checkout, *git, *lfs.checkout_options(rr.common_dir), *off, "read-tree", "--reset", "-u", "HEAD")
    submodules.set_up(rr.common_dir, git_dir, checkout, tip, _module_git_dir)
    return tip, checkout, git_dir, drivers


def _import_lfs(rr: RunRepo, tip: str) -> None:
    """The LFS objects the bot's commits point to, into the user's store, each re-hashed (as bringing the
    branch home does): the checkout smudges from there. One that is missing fails the checkout, said."""
    store = rr.git_dir / "lfs"
    if store.is_symlink() or not (store / "objects").is_dir() or not lfs.installed():
        return
    start = rr.home_tip or rr.base_commit
    with contextlib.suppress(GitError, OSError):
        lfs.import_objects(rr.common_dir, store, lfs.pointers(rr.common_dir, start, tip))


def _module_git_dir(git_dir: Path, user_git: Path, commit: str) -> None:
    init_git_dir(git_dir, userrepo.config(user_git, git_dir=True), user_git, commit)


def add_note(common_dir: Path, sha: str, text: str) -> str:
    """Attach `text` to `sha` under refs/notes/openbot (replacing openbot's earlier note); "" or why not."""
    identity = ("-c", "user.name=openbot", "-c", "user.email=openbot@localhost")
    try:
        run_git(
            common_dir, f"--git-dir={common_dir}", *identity, "notes", f"--ref={NOTES_REF}", "add", "-f",
            "-m", text, sha, timeout=60,
        )  # fmt: skip
    except GitError as e:
        return e.one_line()
    return ""


def read_note(common_dir: Path, sha: str) -> str:
    proc = run_git(
        common_dir, f"--git-dir={common_dir}", "notes", f"--ref={NOTES_REF}", "show", sha, check=False
    )
    return proc.stdout.strip() if proc.returncode == 0 else ""
