"""Which paths a run's commands may write: the worktree and the git state a commit needs, or the user's
checkout without its git dir. Landlock rules and bwrap binds are both built from these lists."""

from __future__ import annotations

import os
from pathlib import Path


def is_users_checkout(workdir: Path, common_dir: Path | None, admin_dir: Path | None) -> bool:
    """A --no-worktree run: the working directory holds the repository's own `.git` (dir, or the `.git`
    file of the user's linked worktree), which git trusts for config and hooks outside any sandbox."""
    if common_dir is not None and common_dir.resolve().is_relative_to(workdir):
        return True
    return admin_dir is None and (common_dir is not None or os.path.lexists(workdir / ".git"))


def checkout_paths(workdir: Path) -> list[Path]:
    """Everything under `workdir` except its `.git` and submodules' `.git` files.

    Landlock cannot make `.git` read-only inside a writable `workdir`, so `workdir` itself is not granted:
    each entry beside `.git` is (a directory recursively, a file on its own). New top-level entries
    cannot be created, and commits are impossible — the user commits.
    """
    protected = {Path(".git")} | {Path(sub) / ".git" for sub in _submodule_paths(workdir)}
    protected |= _config_paths(workdir)
    return _paths_around(workdir, workdir, protected)


def _config_paths(workdir: Path) -> set[Path]:
    """What in the checkout configures later runs outside the sandbox: `.openbot/` (bots, skills) and an
    in-tree hooks directory (`core.hooksPath`, e.g. `.githooks`, husky's `.husky/_` and `.husky/`)."""
    from openbot import gate

    found = {Path(".openbot")}
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    try:
        out = gate.run(
            gate.GIT_READ,
            ["git", "config", "--get", "core.hooksPath"],
            cwd=workdir,
            env=env,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, gate.TimeoutExpired):
        out = ""
    hooks = (workdir / Path(out).expanduser()).resolve() if out else None
    if hooks is not None and hooks.is_relative_to(workdir) and hooks != workdir:
        rel = hooks.relative_to(workdir)
        found.add(rel)
        if rel.name == "_" and rel.parent != Path("."):  # husky: `_/` runs the hooks kept beside it
            found.add(rel.parent)
    return found


def _paths_around(root: Path, directory: Path, protected: set[Path]) -> list[Path]:
    granted: list[Path] = []
    for entry in sorted(directory.iterdir()):
        rel = entry.relative_to(root)
        # A symlink would grant its target (Landlock opens the path): the target is either inside the
        # tree and granted on its own, or outside it (or in .git) and not to be granted at all.
        if rel in protected or entry.is_symlink() or not (entry.is_dir() or entry.is_file()):
            continue
        if entry.is_dir() and any(p.is_relative_to(rel) for p in protected):
            granted += _paths_around(root, entry, protected)
        else:
            granted.append(entry)
    return granted


def _submodule_paths(workdir: Path) -> list[str]:
    """Submodule paths from `.gitmodules` (git-config syntax, `path = sub/dir` lines)."""
    try:
        text = (workdir / ".gitmodules").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    paths = []
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() == "path" and value.strip().strip('"'):
            paths.append(value.strip().strip('"').strip("/"))
    return paths


def workspace_paths(worktree: Path, common_dir: Path | None, admin_dir: Path | None) -> list[Path]:
    paths = [worktree]
    if common_dir is not None:
        # A commit in a linked worktree writes objects, the worktree's own HEAD/index/logs, and the
        # branch's ref and reflog (`<name>.lock` is created next to the ref). Granting refs/heads/openbot/
        # rather than refs/heads/ is what keeps `git branch -f main` out: main.lock cannot be created.
        ref_dirs = [
            common_dir / "refs" / "heads" / "openbot",
            common_dir / "logs" / "refs" / "heads" / "openbot",
        ]
        for d in ref_dirs:
            d.mkdir(parents=True, exist_ok=True)
        paths += [common_dir / "objects", *ref_dirs]
    if admin_dir is not None:
        paths.append(admin_dir)
    return paths


def alternates(git_dirs: list[Path | None]) -> list[Path]:
    """The object directories these git dirs borrow through `objects/info/alternates`: git inside the
    sandbox must read them, also where they lie under a directory the sandbox hides (/tmp)."""
    found: list[Path] = []
    for git_dir in git_dirs:
        if git_dir is None:
            continue
        objects = git_dir / "objects"
        try:
            lines = (objects / "info" / "alternates").read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for line in lines.splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                found.append(objects / line if not os.path.isabs(line) else Path(line))
    return found


def interpreter_paths() -> list[Path]:
    """The paths openbot runs from, resolved: its interpreter's prefixes and directory, the console script's
    directory, every site directory on its import path (a `.pth` or `sitecustomize.py` planted there runs
    at openbot's next start), and the top-level package of every module it has loaded from elsewhere (an
    editable install's source). No confined command may write any of them, whatever the mode."""
    import site
    import sys

    found = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    found |= {os.path.dirname(sys.executable), os.path.dirname(os.path.realpath(sys.executable))}
    if sys.argv and os.path.isfile(sys.argv[0]):
        found.add(os.path.dirname(os.path.abspath(sys.argv[0])))
    sites = {*site.getsitepackages(), site.getusersitepackages()}
    entries = [p for p in sys.path if p and os.path.isabs(p) and os.path.isdir(p)]
    found |= {p for p in entries if p in sites or _holds_packages(p)}
    known = tuple(os.path.realpath(p).rstrip("/") + "/" for p in found if p)
    for name, module in list(sys.modules.items()):
        where = getattr(module, "__file__", None)
        if "." in name or not isinstance(where, str) or not os.path.isabs(where):
            continue
        if not os.path.realpath(where).startswith(known):  # the standard library and site dirs are in
            found.add(os.path.dirname(where) if os.path.basename(where) == "__init__.py" else where)
    return sorted({Path(os.path.realpath(p)) for p in found if p})


def _holds_packages(directory: str) -> bool:
    """A site directory: installed distributions' metadata or `.pth` files live in it. Not `.egg-info`:
    a project's checkout holds one (a legacy editable install), and `python -m openbot` puts it first on
    the import path — it stays the bot's."""
    try:
        names = os.listdir(directory)
    except OSError:
        return False
    return any(n.endswith((".dist-info", ".pth")) for n in names)


def around(writable: list[Path], protected: list[Path]) -> list[Path]:
    """`writable` less the `protected` paths: a writable path inside one is dropped, one that holds some
    is granted entry by entry around them (as `checkout_paths` does around `.git`)."""
    granted: list[Path] = []
    for w in writable:
        if any(w == p or w.is_relative_to(p) for p in protected):
            continue
        inside = {p.relative_to(w) for p in protected if p.is_relative_to(w)}
        granted += _paths_around(w, w, inside) if inside else [w]
    return granted
