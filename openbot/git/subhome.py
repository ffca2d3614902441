"""The bot's work in submodules, brought into the user's module repositories (see submodules.py).

Runs in `bring_home`, after the superproject's commits are imported and before its WIP commit: for each
module openbot set up (its owner record says which), deepest first,
1. its HEAD commit, and every commit the bot's new commits of its parent name as its gitlink, are
   imported into the user's module repository through a carrier (carrier.py: verified, hooks off);
2. what the bot left uncommitted in it becomes a WIP commit there (wip.py), with its own submodules'
   final commits as gitlinks;
3. `refs/heads/openbot/<run name>` in the user's module repository keeps the final commit (a commit it
   does not reach gets `…-<sha>`), and the parent's WIP commit points to it.
Nothing else of the user's module repository (other refs, HEAD, index, its checkout) is written.
"""

from __future__ import annotations

from pathlib import Path

from openbot.errors import GitError
from openbot.git.carrier import borrow, fetch, has_commit, make_carrier, read_head
from openbot.git.carryover import SETUP_EXCLUDES, wip_filters
from openbot.git.gitcmd import open_repo, rmtree, run_git, signature
from openbot.git.runsdir import Module, RunRepo
from openbot.git.specials import planted_link
from openbot.git.submodules import gitlinks
from openbot.git.wip import commit_wip

_ZERO = "0" * 40


def bring_modules_home(rr: RunRepo, start: str, tip: str, message: str) -> tuple[dict[str, str], list[str]]:
    """Import the bot's work in each module; returns the top-level modules' final commits by path (the
    superproject's WIP commit points to them) and one line per thing that could not be saved."""
    notes = _unknown_gitlinks(rr, start, tip)
    if not rr.modules:
        return {}, notes
    heads = {m.key: _import_head(rr, m, notes) for m in rr.modules}
    finals: dict[str, str] = {}
    for m in sorted(rr.modules, key=lambda m: -m.key.count("/modules/")):
        finals[m.key] = _finish(rr, m, heads, finals, (start, tip), message, notes)
    return {m.path: finals[m.key] for m in rr.modules if not m.parent}, notes


def _unknown_gitlinks(rr: RunRepo, start: str, tip: str) -> list[str]:
    """Gitlinks the bot's commits added that no module repository of the user's holds: the branch names
    them, their commits exist nowhere outside the run (said, never fetched)."""
    if start == tip:
        return []
    known = {m.path for m in rr.modules if not m.parent}
    before = gitlinks(rr.common_dir, start)
    added = {
        p: sha for p, sha in gitlinks(rr.common_dir, tip).items() if p not in known and before.get(p) != sha
    }
    return [
        f"submodule {path}: the bot's branch names its commit {sha[:12]}, which is not in your clone "
        "(openbot saves commits only in submodules it checked out)"
        for path, sha in sorted(added.items())
    ]


def _import_head(rr: RunRepo, m: Module, notes: list[str]) -> str:
    user = rr.common_dir / m.key
    head = read_head(rr.git_dir, m.key)
    if head is None:
        notes.append(f"submodule {m.path}: its HEAD could not be read; its commits were not saved")
        return m.base
    if head == m.base or has_commit(user, head):
        return head
    c = _carrier(rr, m, m.base)
    try:
        fetch(user, c, [head], [rr.git_dir / m.key / "objects", user / "objects"])
    except GitError as e:
        notes.append(f"submodule {m.path}: the bot's commits could not be imported ({e.one_line()})")
        return m.base
    finally:
        rmtree(c)
    return head


def _finish(
    rr: RunRepo,
    m: Module,
    heads: dict[str, str],
    finals: dict[str, str],
    span: tuple[str, str],
    message: str,
    notes: list[str],
) -> str:
    user, run = rr.common_dir / m.key, rr.git_dir / m.key
    parent = next((p for p in rr.modules if p.key == m.parent), None)
    if parent is None:
        links = _links(rr.common_dir, *span, m.path)
    else:
        links = _links(
            rr.common_dir / parent.key, parent.base, heads[parent.key], m.path[len(parent.path) + 1 :]
        )
    head, wip = heads[m.key], None
    c = _carrier(rr, m, head)
    try:
        missing = [sha for sha in links if not has_commit(user, sha)]
        if missing:
            try:
                fetch(user, c, missing, [run / "objects", user / "objects"])
            except GitError as e:
                notes.append(
                    f"submodule {m.path}: commits the bot's branch names were not saved ({e.one_line()})"
                )
        children = {k.path[len(m.path) + 1 :]: finals[k.key] for k in rr.modules if k.parent == m.key}
        wip = _wip(rr, m, c, head, children, message, notes)
    finally:
        rmtree(c)
    final = wip or head
    _keep(user, rr.name, m.base, final, [sha for sha in links if has_commit(user, sha)])
    return final


def _wip(
    rr: RunRepo, m: Module, c: Path, head: str, children: dict[str, str], message: str, notes: list[str]
) -> str | None:
    """What the bot left uncommitted in the module's checkout, committed in the user's module repository."""
    user, checkout = rr.common_dir / m.key, rr.path / m.path
    if planted_link(rr.path, m.path):
        notes.append(
            f"submodule {m.path}: the agent made its path a symlink; its uncommitted work was not read"
        )
        return None
    if not checkout.is_dir():
        return None
    borrow(c, [user / "objects"])  # libgit2 reads only objects git has verified
    try:
        sig = signature(open_repo(user))
        stat_cache = rr.git_dir / m.key / "index"
        wip = commit_wip(c, checkout, head, message, sig, stat_cache, lambda: wip_filters(user), children)
        if wip is not None:
            fetch(user, c, [wip], [user / "objects"])
            notes.append(f"submodule {m.path}: uncommitted work saved as WIP commit {wip[:12]} there")
        return wip
    except GitError as e:
        notes.append(f"submodule {m.path}: its uncommitted work could not be saved ({e.one_line()})")
        return None


def _carrier(rr: RunRepo, m: Module, head: str) -> Path:
    c = rr.carrier / "module"
    rmtree(c)
    exclude = rr.common_dir / m.key / "info" / "exclude"
    mine = exclude.read_bytes() if exclude.is_file() and not exclude.is_symlink() else b""
    make_carrier(c, head, mine + b"\n" + SETUP_EXCLUDES.encode())
    return c


def _links(parent_git: Path, base: str, head: str, path: str) -> list[str]:
    """The commits the parent's commits `base..head` name as the gitlink at `path`, oldest last."""
    if base == head:
        return []
    proc = run_git(
        parent_git,
        f"--git-dir={parent_git}",
        *("log", "--format=", "--raw", "--no-abbrev", "--no-renames", head, f"^{base}", "--", path),
        check=False,
    )
    found: list[str] = []
    for line in proc.stdout.splitlines():
        fields = line.split("\t", 1)[0].split()
        if len(fields) >= 5 and fields[1] == "160000" and fields[3] != _ZERO and fields[3] not in found:
            found.append(fields[3])
    return found


def _keep(user: Path, run_name: str, base: str, final: str, links: list[str]) -> None:
    """`refs/heads/openbot/<run name>` at `final` in the user's module repository; a `-<sha>` ref for each
    other commit (named by a gitlink, or the ref's earlier value) that `final` does not reach."""
    ref = f"refs/heads/openbot/{run_name}"
    gd = f"--git-dir={user}"
    old = run_git(user, gd, "rev-parse", "--verify", "-q", ref, check=False).stdout.strip()
    if final == base and not old and all(sha == base for sha in links):
        return  # the bot left the module as it found it
    msg = f"openbot: the work of run {run_name} in this submodule"
    run_git(user, gd, "update-ref", "-m", msg, ref, final)
    for sha in dict.fromkeys([old, *links]):
        if sha and sha != final and not _reaches(user, final, sha):
            run_git(user, gd, "update-ref", "-m", msg, f"{ref}-{sha[:12]}", sha)


def _reaches(git_dir: Path, tip: str, sha: str) -> bool:
    proc = run_git(git_dir, f"--git-dir={git_dir}", "merge-base", "--is-ancestor", sha, tip, check=False)
    return proc.returncode == 0
