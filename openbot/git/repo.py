"""Finding the git repository around a directory, without importing pygit2 (fast paths use this).

Works from the main checkout, a subdirectory, and inside any linked worktree: every worktree of one
repository resolves to the same `common_dir`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class RepoInfo:
    workdir: Path  # top of the checkout the directory is in (main checkout or a linked worktree)
    git_dir: Path  # that checkout's own git dir (<common>/worktrees/<name> for a linked worktree)
    common_dir: Path  # the repository's shared git dir (…/.git)

    @property
    def main_root(self) -> Path:
        """The main checkout's top (parent of the common .git dir), the repo's human name comes from here."""
        return self.common_dir.parent if self.common_dir.name == ".git" else self.common_dir

    @property
    def is_linked_worktree(self) -> bool:
        return self.git_dir != self.common_dir


def _read_gitfile(path: Path) -> Path | None:
    try:
        text = path.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    target = Path(text.removeprefix("gitdir:").strip())
    return (path.parent / target).resolve() if not target.is_absolute() else target


def _common_dir(git_dir: Path) -> Path:
    try:
        rel = (git_dir / "commondir").read_text(encoding="utf-8").strip()
    except OSError:
        return git_dir
    return (git_dir / rel).resolve()


def find_repo(start: Path) -> RepoInfo | None:
    """The repository containing `start`, or None outside any git repository."""
    here = start.resolve()
    for d in (here, *here.parents):
        dotgit = d / ".git"
        if dotgit.is_dir() and (dotgit / "HEAD").exists():
            return RepoInfo(workdir=d, git_dir=dotgit, common_dir=_common_dir(dotgit))
        if dotgit.is_file():
            git_dir = _read_gitfile(dotgit)
            if git_dir is not None and git_dir.is_dir():
                return RepoInfo(workdir=d, git_dir=git_dir, common_dir=_common_dir(git_dir))
    return None
