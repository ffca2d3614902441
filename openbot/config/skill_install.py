"""Installing and removing skills: from a .md file, a folder (Agent Skills `<name>/SKILL.md` too) or a git
URL, into the global or a bot's skills directory, as user-only files.

A bot can write its own skills directory, so what is there may be a trap: a link `helper.md -> ~/.profile`
or `tool -> ~/.config`. Nothing here writes through a link: the destination directory must be a real
directory (opened O_NOFOLLOW, then used only through that fd), a name taken by anything is a clash that
needs --force (which removes the link, never its target), and each skill is built under a fresh temp
name (O_EXCL, O_NOFOLLOW) and renamed into place.

What comes over the network (a git URL, a registry id) is pinned to the commit fetched, installed only
once `approve` (the CLI: the text shown, `--yes` or a yes at the prompt) let it, and its commit recorded
in the destination's `.pins.json`. A path that does not exist is an error, never a registry id.
"""

from __future__ import annotations

import difflib
import os
import re
import secrets
import shutil
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

from openbot import gate, paths
from openbot.config import skill_registry
from openbot.config.skill_registry import Remote
from openbot.config.skills import SKILL_FILE, Skill, discover, load_skill, scan
from openbot.errors import GitError, NotFoundError, OpenbotError, UsageError
from openbot.files import read_capped

COPY_LIMIT = 16 * 1024 * 1024  # bytes of one file in a skill folder (scripts, references, assets)
_DIR_NOFOLLOW = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC

CLONE_TIMEOUT_SECS = 300


def _is_git_url(source: str) -> bool:
    return "://" in source or bool(re.match(r"^[\w.-]+@[\w.-]+:", source))


def _is_bare_repo(path: Path) -> bool:
    return path.is_dir() and (path / "HEAD").is_file() and (path / "objects").is_dir()


def _clone(url: str, into: Path) -> Path:
    target = into / "src"
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}  # never wait on a password prompt
    try:
        out = gate.run(
            gate.SKILL_CLONE,
            ["git", "clone", "--depth", "1", "--quiet", "--", url, str(target)],
            capture_output=True,
            text=True,
            env=env,
            timeout=CLONE_TIMEOUT_SECS,
        )
    except FileNotFoundError as e:
        raise OpenbotError("git is not installed", hint="install git to install skills from a URL") from e
    except gate.TimeoutExpired as e:
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
    if os.path.lexists(root / SKILL_FILE):
        return [load_skill(root / SKILL_FILE, "install", root=root, default_name=name_hint)]
    return discover(root, "install") or discover(root / "skills", "install", root)


def _looks_local(source: str) -> bool:
    """A path rather than a URL or a registry id (owner/repo/skill): an id's shape whose first part is a
    local directory means a path under it."""
    if _is_git_url(source):
        return False
    shaped = skill_registry.SKILL_ID_RE.match(source) is not None
    if shaped and os.path.lexists(source.split("/", 1)[0]):
        return True
    return source.startswith((".", "/", "~")) or source.endswith(".md") or ("/" in source and not shaped)


Found = tuple[list[Skill], Path, Remote | None]


def _find(source: str, tmp: Path) -> Found:
    """The skills at `source`, the directory their files must stay inside (links out are refused), and
    where they came from when that was over the network."""
    local = Path(source).expanduser()
    if local.is_file():
        if local.suffix != ".md":
            raise UsageError(f"{local}: a skill file must end in .md")
        local = local.resolve()  # the file the user named, wherever a link of theirs points
        return [load_skill(local, "install")], local.parent, None
    if local.is_dir() and not _is_bare_repo(local):
        return _skills_in(local, local.resolve().name), local, None
    if _is_git_url(source) or _is_bare_repo(local):
        url = source if _is_git_url(source) else str(local.resolve())
        clone = _clone(url, tmp)
        remote = Remote(source, url, _head(clone)) if _is_git_url(source) else None
        return _skills_in(clone, url.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")), clone, remote
    if _looks_local(source):
        raise NotFoundError(f"{source}: no such file or directory (nothing was downloaded)")
    if (ident := skill_registry.registry_id(source)) is not None:
        folder, remote = skill_registry.fetch(*ident, tmp)
        return _skills_in(folder, folder.name), folder, remote
    raise NotFoundError(
        f"no skill file, folder, git URL or registry id (owner/repo/skill) at {source!r}",
        hint="`openbot skills search <words>` finds registry ids",
    )


def _head(clone: Path) -> str:
    from openbot.git.gitcmd import open_repo

    return str(open_repo(clone).head.target)


Approve = Callable[[Remote, list[Skill]], None]


def install_skill(
    source: str, dest_dir: Path, force: bool = False, approve: Approve | None = None
) -> list[Skill]:
    """Copy the skills at `source` (a .md file, a folder, a git URL or a registry id) into `dest_dir`;
    return them there. What came over the network is installed only if `approve` returns (it raises to
    refuse); without `approve` it is refused."""
    with tempfile.TemporaryDirectory(prefix="openbot-skill-") as tmp:
        found, src_root, remote = _find(source, Path(tmp))
        if not found:
            raise UsageError(
                f"no skills found in {source}", hint="expected *.md files or <name>/SKILL.md folders"
            )
        if remote is not None:
            if approve is None:
                raise UsageError(f"{source} comes from {remote.url}: installing it needs approval")
            approve(remote, found)
        dest = _open_dest(dest_dir)
        try:
            _install_into(dest, dest_dir, found, src_root, force)
            if remote is not None:
                skill_registry.record_pins(dest, [s.name for s in found], remote)
        finally:
            os.close(dest)
    installed = {s.name: s for s in discover(dest_dir, "installed")}
    return [installed[s.name] for s in found]


def _install_into(dest: int, dest_dir: Path, found: list[Skill], src_root: Path, force: bool) -> None:
    valid, invalid = scan(dest_dir, "installed")
    # A file that no longer loads still holds its name: --force replaces it, which is one way to fix it.
    existing: dict[str, Path] = {i.name: i.root for i in invalid}
    existing.update((s.name, s.root) for s in valid)
    for skill in found:
        target = skill.name if skill.path.name == SKILL_FILE else f"{skill.name}.md"
        taken = [
            p.name for p in (existing.get(skill.name), dest_dir / target) if p and _lexists(dest, p.name)
        ]
        if taken and not force:
            raise UsageError(
                f"skill '{skill.name}' is already installed at {dest_dir / taken[0]}",
                hint="pass --force to replace it",
            )
    for skill in found:
        target = skill.name if skill.path.name == SKILL_FILE else f"{skill.name}.md"
        for name in dict.fromkeys(p.name for p in (existing.get(skill.name), dest_dir / target) if p):
            _remove_at(dest, name)
        _place(skill.root, src_root, dest, target)


def _open_dest(dest_dir: Path) -> int:
    """An fd of `dest_dir` (created user-only); a symlinked destination is refused, not followed."""
    if dest_dir.is_symlink():
        raise UsageError(
            f"{dest_dir} is a symlink; openbot installs skills only into a real directory",
            hint="replace the link with a directory of the skills it pointed to",
        )
    paths.make_private_dir(dest_dir)
    try:
        return os.open(dest_dir, _DIR_NOFOLLOW)
    except OSError as e:
        raise UsageError(f"cannot install into {dest_dir}: {e.strerror}") from None


def _lexists(dir_fd: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def _remove_at(dir_fd: int, name: str) -> None:
    """Remove the entry `name` — a link itself, never what it points to."""
    try:
        mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISDIR(mode):
        shutil.rmtree(name, dir_fd=dir_fd)
    else:
        os.unlink(name, dir_fd=dir_fd)


def _place(src: Path, src_root: Path, dest: int, name: str) -> None:
    """Copy `src` (file or folder) to a fresh temp entry in `dest`, then rename it to `name`."""
    tmp = f".{name}.{secrets.token_hex(4)}.tmp"
    try:
        _copy_at(src, src_root, dest, tmp)
        os.rename(tmp, name, src_dir_fd=dest, dst_dir_fd=dest)
    except BaseException as e:
        _remove_at(dest, tmp)
        if isinstance(e, OSError) and not isinstance(e, FileNotFoundError):
            raise UsageError(
                f"cannot install {name}: {e.strerror} (did something change it meanwhile?)"
            ) from e
        raise


def _copy_at(src: Path, src_root: Path, dest: int, name: str) -> None:
    """Create `name` in the directory `dest` from `src`, as user-only (0700 dirs, 0600 files, 0700 if
    executable); only regular files and folders are copied (minus .git and links), never through a link."""
    if not src.is_dir():
        data, cut = read_capped(src, root=src_root, limit=COPY_LIMIT)
        if cut:
            raise UsageError(f"{src}: larger than {COPY_LIMIT // (1024 * 1024)} MB; not installed")
        mode = 0o700 if os.stat(src).st_mode & 0o111 else 0o600
        fd = os.open(
            name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=dest
        )
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        return
    os.mkdir(name, 0o700, dir_fd=dest)
    below = os.open(name, _DIR_NOFOLLOW, dir_fd=dest)
    try:
        for entry in sorted(os.scandir(src), key=lambda e: e.name):
            if entry.name != ".git" and (
                entry.is_dir(follow_symlinks=False) or entry.is_file(follow_symlinks=False)
            ):
                _copy_at(Path(entry.path), src_root, below, entry.name)
    finally:
        os.close(below)


def remove_skill(name: str, dest_dir: Path) -> Path:
    """Delete the skill `name` from `dest_dir` (its file, or its whole folder); return what was removed.

    A skill that does not load is found by its file stem or folder name, without parsing it."""
    if dest_dir.is_symlink():
        raise UsageError(f"{dest_dir} is a symlink; openbot removes skills only from a real directory")
    valid, invalid = scan(dest_dir, "installed")
    roots = {i.name: i.root for i in invalid}
    roots.update((s.name, s.root) for s in valid)
    if name not in roots:
        close = difflib.get_close_matches(name, list(roots), n=3)
        hint = f"did you mean '{close[0]}'?" if close else f"skills there: {', '.join(roots) or 'none'}"
        raise NotFoundError(f"no skill named '{name}' in {dest_dir}", hint=hint)
    dest = os.open(dest_dir, _DIR_NOFOLLOW)
    try:
        _remove_at(dest, roots[name].name)
    finally:
        os.close(dest)
    return roots[name]
