"""Which project a directory belongs to: the key under `workspaces/` that memory and history live in.

Identity comes from the repository, never from the directory name alone. The normalized `remote "origin"`
url (from `<common_dir>/config`) when there is one, so a CI checkout in a fresh path keeps its memory;
otherwise the absolute common git dir, so every linked worktree of one repository is the same project —
unless the state kept under that key was made in another repository (none of the commits its runs
started from is here: the repository was deleted and made again at the same path); then the root
commit joins the identity, and the new repository starts with state of its own.
The slug is `<readable name>-<first 8 hex of sha256(identity)>`. Pure Python: no pygit2 on this path.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from openbot import paths
from openbot.errors import UsageError
from openbot.git.gitcmd import run_bounded, run_git
from openbot.git.repo import RepoInfo, find_repo

SLUG_RE = re.compile(r"^[A-Za-z0-9._-]+$")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_SECTION = re.compile(r'^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]')
_ESCAPES = {"n": "\n", "t": "\t", "b": "\b", '"': '"', "\\": "\\"}


@dataclass(frozen=True)
class Project:
    slug: str  # directory name under workspaces/, readable and unique, e.g. "app-1a2b3c4d"
    repo: RepoInfo | None  # None outside a git repository
    identity: str = ""  # what the hash in the slug was computed from (remote url or path)


def _config_value(raw: str) -> str:
    """A git-config value: quotes removed, escapes decoded, an unquoted `#`/`;` starts a comment."""
    out: list[str] = []
    quoted = False
    chars = iter(raw)
    for ch in chars:
        if ch == '"':
            quoted = not quoted
        elif ch == "\\":
            out.append(_ESCAPES.get(next(chars, ""), ""))
        elif ch in "#;" and not quoted:
            break
        else:
            out.append(ch)
    return "".join(out).strip()


def read_git_config(path: Path, section: str, subsection: str, key: str) -> str | None:
    """The first value of `section "subsection".key` in one git config file (includes are not followed)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    text = re.sub(r"\\\r?\n", "", text)  # a trailing backslash continues the line
    current: tuple[str, str] | None = None
    for line in text.splitlines():
        line = line.strip()
        m = _SECTION.match(line)
        if m:
            name, sub = m.group(1), m.group(2)
            if sub is None and "." in name:  # deprecated [remote.origin] form, case-insensitive
                name, _, sub = name.partition(".")
                sub = sub.lower()
            current = (name.lower(), re.sub(r"\\(.)", r"\1", sub or ""))
            line = line[m.end() :].strip()  # git allows `[core] bare = false` on one line
        if not line or line[0] in "#;" or current != (section, subsection):
            continue
        name, eq, value = line.partition("=")
        if name.strip().lower() == key:
            return _config_value(value) if eq else "true"
    return None


def normalize_remote(url: str) -> str:
    """One spelling per repository: ssh, scp-like and https urls of one repo map to `host/owner/repo`.

    Credentials and ports are dropped (a rotated token must not move the memory), as are `.git` and
    slashes at the end. Local paths stay paths."""
    url = url.strip()
    if "://" in url:
        parts = urlsplit(url)
        host, path = (parts.hostname or "").lower(), parts.path
        if parts.scheme == "file" or not host:
            return "file:" + path.rstrip("/").removesuffix(".git")
    elif ":" in url and "/" not in url.split(":", 1)[0]:  # scp-like: [user@]host:path
        host, path = url.split(":", 1)
        host = host.rsplit("@", 1)[-1].lower()
    else:
        return "file:" + url.rstrip("/").removesuffix(".git")
    return f"{host}/{path.strip('/').removesuffix('.git').strip('/')}"


def _safe_name(name: str) -> str:
    return _UNSAFE.sub("-", name).strip(".-")[:40] or "project"


def _slug(name: str, identity: str) -> str:
    return f"{_safe_name(name)}-{hashlib.sha256(identity.encode()).hexdigest()[:8]}"


def check_slug(slug: str) -> str:
    if not SLUG_RE.match(slug) or slug in (".", "..") or len(slug) > 100:
        raise UsageError(
            f"invalid project {slug!r}",
            hint="use letters, digits, '.', '_' or '-' (as listed under workspaces/)",
        )
    return slug


def resolve_project(cwd: Path, override: str | None = None) -> Project:
    """The project of `cwd` (its repository, else the directory itself); `override` is a `--project` slug."""
    repo = find_repo(cwd)
    if override is not None:
        return Project(check_slug(override), repo, identity="--project")
    if repo is None:
        here = cwd.resolve()
        return Project(_slug(here.name or "root", str(here)), None, identity=str(here))
    url = read_git_config(repo.common_dir / "config", "remote", "origin", "url")
    if url:
        identity = normalize_remote(url)
        # The readable part follows the identity too, so a clone in a differently named directory matches.
        name = identity.rstrip("/").rsplit("/", 1)[-1] or repo.main_root.name
        return Project(_slug(name, identity), repo, identity=identity)
    identity = str(repo.common_dir)
    slug = _slug(repo.main_root.name, identity)
    if _made_elsewhere(repo, slug):  # a repository deleted and made again at this path: its own project
        identity = f"{identity}#{_roots(repo)}"
        slug = _slug(repo.main_root.name, identity)
    return Project(slug, repo, identity=identity)


def _roots(repo: RepoInfo) -> str:
    out = run_git(repo.workdir, "rev-list", "--max-parents=0", "HEAD", check=False)
    return ",".join(sorted(out.stdout.split())) or "unborn"


def _made_elsewhere(repo: RepoInfo, slug: str) -> bool:
    """Whether the state kept under this path's key was made in another repository: the commits every
    recorded run started from are missing here (a repository deleted and recreated at the same path must
    not inherit the old one's memory and history). No recorded run: nothing says so, the state is kept."""
    commits: set[str] = set()
    for record in paths.bots_dir().glob(f"*/workspaces/{slug}/runs/*/run.json"):
        try:
            commits.add(str(json.loads(record.read_text())["base_commit"]))
        except (OSError, ValueError, KeyError, TypeError):
            continue
    commits = {c for c in commits if re.fullmatch(r"[0-9a-f]{40,64}", c)}
    if not commits:
        return False
    stdin = "".join(f"{c}^{{commit}}\n" for c in sorted(commits))
    out = run_bounded(
        ["git", "cat-file", "--batch-check"], cwd=repo.workdir, stdin=stdin.encode(), what="git cat-file"
    )
    return b" commit " not in out.stdout
