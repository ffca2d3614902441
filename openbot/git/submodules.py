"""Submodules in a run: checked out from the user's own module repositories, and the bot's work in them kept.

Setting up (`set_up`, with the run repository): for each gitlink of the start commit that `.gitmodules`
names and whose module repository `<git dir>/modules/<name>` has the commit, the run repository gets a
module repository of its own at `<run git dir>/modules/<name>` — made like the run repository (objects
borrowed through alternates, HEAD detached at the gitlink, the module's hooks and filters) — and its
files are checked out in the bot's checkout. Nested submodules the same way, below. Nothing is fetched:
what the user's clone lacks stays empty, and the run says so. The run's config names each module
(`submodule.<name>.url` = the user's module repository, a local path), so `git submodule update --init`
in the sandbox finds every module already there.

Bringing home (`bring_home`, before the superproject's WIP commit): each module's HEAD, the gitlinks the
bot's new superproject commits name, and a WIP commit of what it left uncommitted there are imported
into the user's module repository exactly as the superproject's branch is (verified fetch from a carrier,
hooks off), and kept by a ref `refs/heads/openbot/<run name>` there (plus `-<sha>` refs for commits
that ref does not reach). The user's other refs, HEAD, index and checkout of the module are never
written. Only modules openbot set up (its owner record says which) are read; a gitlink the bot added
is reported, never fetched.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from openbot.errors import GitError
from openbot.git import lfs
from openbot.git.carrier import has_commit
from openbot.git.gitcmd import git_bytes, rmtree, run_git
from openbot.git.runsdir import Module

MAX_DEPTH = 4  # nested submodules followed this deep
GITLINK = "160000"


def _safe_rel(value: str) -> bool:
    parts = value.split("/")
    return (
        bool(value)
        and not value.startswith("/")
        and "\\" not in value
        and "\n" not in value
        and all(p not in ("", ".", "..", ".git") for p in parts)
    )


def gitlinks(git_dir: Path, commit: str) -> dict[str, str]:
    """path → commit of every gitlink in `commit`'s tree (nothing when it has no `.gitmodules`)."""
    gd = f"--git-dir={git_dir}"
    if run_git(git_dir, gd, "cat-file", "-e", f"{commit}:.gitmodules", check=False).returncode != 0:
        return {}
    out = git_bytes(git_dir, "ls-tree", "-r", "-z", "--full-tree", commit).decode("utf-8", "surrogateescape")
    found = {}
    for entry in out.split("\0"):
        meta, _, path = entry.partition("\t")
        fields = meta.split()
        if len(fields) == 3 and fields[0] == GITLINK:
            found[path] = fields[2]
    return found


def module_names(git_dir: Path, commit: str) -> dict[str, str]:
    """path → name from `commit:.gitmodules` (the commit's own, parsed by git)."""
    try:
        out = git_bytes(git_dir, "config", "-z", "--blob", f"{commit}:.gitmodules", "--list")
    except GitError:
        return {}  # not a config file git can read: no submodule is named
    names = {}
    for item in out.decode("utf-8", "surrogateescape").split("\0"):
        key, _, value = item.partition("\n")
        if key.startswith("submodule.") and key.endswith(".path"):
            names[value.strip("/")] = key.removeprefix("submodule.").removesuffix(".path")
    return names


def set_up(
    user_git: Path,
    run_git_dir: Path,
    checkout: Path,
    commit: str,
    make_git_dir: Callable[[Path, Path, str], None],
    parent: Module | None = None,
) -> tuple[list[Module], list[str]]:
    """Check out the submodules of `commit` in `checkout` (see module doc); returns them and what could not
    be set up, one line each. `make_git_dir(git_dir, user_git_dir, commit)` writes a module's git dir."""
    modules: list[Module] = []
    notes: list[str] = []
    links = gitlinks(user_git, commit)
    names = module_names(user_git, commit) if links else {}
    prefix = f"{parent.path}/" if parent else ""
    for path, sha in sorted(links.items()):
        name = names.get(path, "")
        user_module, work = user_git / "modules" / name, checkout / path
        why = _cannot(user_module, name, path, sha, work)
        if why:
            notes.append(f"submodule {prefix}{path}: {why}")
            continue
        key = f"{parent.key}/modules/{name}" if parent else f"modules/{name}"
        module = Module(key, prefix + path, sha, parent.key if parent else "")
        run_module = run_git_dir / "modules" / name
        try:
            _check_out(user_module, run_module, work, sha, make_git_dir)
        except GitError as e:  # e.g. LFS objects its clone lacks: the module stays empty, the run goes on
            rmtree(run_module)
            for entry in work.iterdir():
                rmtree(entry)
            notes.append(f"submodule {prefix}{path}: could not be checked out ({e.one_line()}); left empty")
            continue
        _register(run_git_dir, name, user_module)
        modules.append(module)
        if key.count("/modules/") < MAX_DEPTH:
            inner, inner_notes = set_up(user_module, run_module, work, sha, make_git_dir, module)
            modules += inner
            notes += inner_notes
    return modules, notes


def _register(run_git_dir: Path, name: str, user_module: Path) -> None:
    """`git submodule` in the run finds the module initialised, and would clone from the user's module
    repository (a local path) rather than the network."""
    config = ("config", "--file", str(run_git_dir / "config"))
    run_git(run_git_dir, *config, f"submodule.{name}.url", str(user_module))
    run_git(run_git_dir, *config, f"submodule.{name}.active", "true")


def _cannot(user_module: Path, name: str, path: str, sha: str, work: Path) -> str:
    """Why this submodule cannot be checked out from the user's clone ("" when it can)."""
    if not _safe_rel(name) or not _safe_rel(path):
        return "not named in .gitmodules; left empty"
    if not _has_commit(user_module, sha):
        return (
            f"your clone does not have its commit {sha[:12]} under .git/modules/{name}; left empty "
            "(git submodule update --init; one cloned inside its directory: git submodule absorbgitdirs)"
        )
    lacking = lfs.missing_objects(user_module, sha)
    if lacking:
        return (
            f"its clone lacks the LFS objects of {lacking[0]}"
            + (f" and {len(lacking) - 1} more" if len(lacking) > 1 else "")
            + "; left empty (git submodule foreach git lfs pull)"
        )
    if work.is_symlink() or not work.is_dir() or any(work.iterdir()):
        return "its directory is not an empty directory; left as it is"
    return ""


def _has_commit(git_dir: Path, sha: str) -> bool:
    if git_dir.is_symlink() or not (git_dir / "objects").is_dir() or not (git_dir / "HEAD").is_file():
        return False
    return has_commit(git_dir, sha)


def _check_out(
    user_module: Path, run_module: Path, work: Path, sha: str, make_git_dir: Callable[[Path, Path, str], None]
) -> None:
    make_git_dir(run_module, user_module, sha)
    with open(run_module / "config", "a", encoding="utf-8") as f:
        f.write(f'[core]\n\tworktree = "{_escape(str(work))}"\n')
    (work / ".git").write_text(f"gitdir: {run_module}\n", encoding="utf-8")
    git = (f"--git-dir={run_module}", f"--work-tree={work}")
    run_git(work, *git, *lfs.checkout_options(user_module), "read-tree", "--reset", "-u", "HEAD")


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')
