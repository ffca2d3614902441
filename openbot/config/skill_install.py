"""Installing and removing skills: from a .md file, a folder (Agent Skills `<name>/SKILL.md` too) or a git
URL, into the global or a bot's skills directory, as user-only files."""

from __future__ import annotations

import difflib
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from openbot import paths
from openbot.config.skills import SKILL_FILE, InvalidSkill, Skill, discover, load_skill, scan
from openbot.errors import GitError, NotFoundError, OpenbotError, UsageError

CLONE_TIMEOUT_SECS = 300


def _is_git_url(source: str) -> bool:
    return "://" in source or bool(re.match(r"^[\w.-]+@[\w.-]+:", source))


def _is_bare_repo(path: Path) -> bool:
    return path.is_dir() and (path / "HEAD").is_file() and (path / "objects").is_dir()


def _clone(url: str, into: Path) -> Path:
    target = into / "src"
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}  # never wait on a password prompt
    try:
        out = subprocess.run(
            ["git", "clone", "--depth", "1", "--quiet", "--", url, str(target)],
            capture_output=True,
            text=True,
            env=env,
            timeout=CLONE_TIMEOUT_SECS,
        )
    except FileNotFoundError as e:
        raise OpenbotError("git is not installed", hint="install git to install skills from a URL") from e
    except subprocess.TimeoutExpired as e:
        raise GitError(f"git clone {url} took over {CLONE_TIMEOUT_SECS} s") from e
    if out.returncode != 0:
        raise GitError(
            f"git clone {url} failed: {_git_reason(out.stderr)}", hint="check the URL and your access to it"
        )
    return target


def _git_reason(stderr: str) -> str:
    """The `fatal:`/`error:` lines of git's stderr, which say what went wrong (the rest is advice)."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    meaningful = [
        line.split(":", 1)[1].strip() for line in lines if line.lower().startswith(("fatal:", "error:"))
    ]
    return "; ".join(meaningful or lines[:1]) or "no output"


def _skills_in(root: Path, name_hint: str) -> list[Skill]:
    """Skills at a source: a skill folder itself, a dir of skills, or a repo with them under `skills/`."""
    if (root / SKILL_FILE).is_file():
        return [load_skill(root / SKILL_FILE, "install", default_name=name_hint)]
    return discover(root, "install") or discover(root / "skills", "install")


def install_skill(source: str, dest_dir: Path, force: bool = False) -> list[Skill]:
    """Copy the skills at `source` (a .md file, a folder, or a git URL) into `dest_dir`; return them there."""
    with tempfile.TemporaryDirectory(prefix="openbot-skill-") as tmp:
        local = Path(source).expanduser()
        if local.is_file():
            if local.suffix != ".md":
                raise UsageError(f"{local}: a skill file must end in .md")
            found = [load_skill(local, "install")]
        elif local.is_dir() and not _is_bare_repo(local):
            found = _skills_in(local, local.resolve().name)
        elif _is_git_url(source) or _is_bare_repo(local):
            url = source if _is_git_url(source) else str(local.resolve())
            found = _skills_in(
                _clone(url, Path(tmp)), url.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")
            )
        else:
            raise NotFoundError(f"no skill file, folder or git URL at {source!r}")
        if not found:
            raise UsageError(
                f"no skills found in {source}", hint="expected *.md files or <name>/SKILL.md folders"
            )
        valid, invalid = scan(dest_dir, "installed")
        # A file that no longer loads still holds its name: --force replaces it, which is one way to fix it.
        existing: dict[str, Skill | InvalidSkill] = {i.name: i for i in invalid}
        existing.update((s.name, s) for s in valid)
        clash = [s.name for s in found if s.name in existing]
        if clash and not force:
            raise UsageError(
                f"skill '{clash[0]}' is already installed at {existing[clash[0]].path}",
                hint="pass --force to replace it",
            )
        paths.make_private_dir(dest_dir)
        for skill in found:
            if skill.name in existing:
                _remove(existing[skill.name].root)
            target = dest_dir / skill.name if skill.path.name == SKILL_FILE else dest_dir / f"{skill.name}.md"
            _copy_private(skill.root, target)
    installed = {s.name: s for s in discover(dest_dir, "installed")}
    return [installed[s.name] for s in found]


def _copy_private(src: Path, dst: Path) -> None:
    """Copy a file or folder (minus .git) as user-only: 0700 dirs, 0600 files (0700 if executable)."""
    if src.is_file():
        shutil.copyfile(src, dst)
        os.chmod(dst, 0o700 if os.access(src, os.X_OK) else 0o600)
        return
    paths.make_private_dir(dst)
    for entry in sorted(src.iterdir()):
        if entry.name == ".git" or entry.is_symlink():
            continue
        _copy_private(entry, dst / entry.name)


def _remove(root: Path) -> None:
    if root.is_dir():
        shutil.rmtree(root)
    else:
        root.unlink()


def remove_skill(name: str, dest_dir: Path) -> Path:
    """Delete the skill `name` from `dest_dir` (its file, or its whole folder); return what was removed.

    A skill that does not load is found by its file stem or folder name, without parsing it."""
    valid, invalid = scan(dest_dir, "installed")
    roots = {i.name: i.root for i in invalid}
    roots.update((s.name, s.root) for s in valid)
    if name not in roots:
        close = difflib.get_close_matches(name, list(roots), n=3)
        hint = f"did you mean '{close[0]}'?" if close else f"skills there: {', '.join(roots) or 'none'}"
        raise NotFoundError(f"no skill named '{name}' in {dest_dir}", hint=hint)
    _remove(roots[name])
    return roots[name]
