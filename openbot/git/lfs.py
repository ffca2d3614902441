"""git-lfs in a run: real content in the bot's checkout, pointers in every commit, no download ever.

- Before anything exists, `check_objects` refuses a clone that lacks LFS objects of the commit the bot
  starts from (exit 2, how to fetch them): openbot never downloads, and a half-made checkout helps no one.
- The run repository keeps the user's `filter.lfs.*` driver (carryover.py), so the agent's `git status`,
  `git add` and `git commit` run git-lfs inside the sandbox: its commits store pointers, and the objects
  land in the run repository's own `lfs/objects`, the one LFS store the agent may write.
- The checkout is made with `lfs.storage` pointing at the user's store (`checkout_options`): git-lfs reads
  the objects there and writes the files' content into the bot's checkout, linking nothing into the run's
  store (a hard link would let the agent write the user's object).
- Bringing the branch home, `import_objects` copies the LFS objects the bot's new commits point to from the
  run's store into the user's, each re-hashed: only an object whose sha256 and size match its pointer
  arrives.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import stat
from pathlib import Path

from openbot.errors import GitError, UsageError
from openbot.git import userrepo
from openbot.git.gitcmd import git_bytes, run_git

POINTER_MAX = 1024  # the spec's upper bound on a pointer file's size
_POINTER_HEAD = b"version https://git-lfs.github.com/spec/v1\n"
# Where git-lfs would fetch from, should an object be missing after all: a local path that does not exist.
NO_DOWNLOAD = ("-c", "lfs.url=file:///dev/null/openbot-never-downloads")


def installed() -> bool:
    return shutil.which("git-lfs") is not None


def configured(common_dir: Path, config: userrepo.ConfigEntries | None = None) -> bool:
    """The user's git runs git-lfs on checkout (`git lfs install`: local, global or system config)."""
    entries = userrepo.config(common_dir, git_dir=True) if config is None else config
    return any(name.lower().startswith("filter.lfs.") for name, _ in entries)


def storage(common_dir: Path, config: userrepo.ConfigEntries | None = None) -> Path:
    """The user's LFS store (`lfs.storage`, relative to the git dir, or `<git dir>/lfs`)."""
    entries = userrepo.config(common_dir, git_dir=True) if config is None else config
    value = userrepo.get(entries, "lfs.storage") or ""
    return (common_dir / os.path.expanduser(value)).resolve() if value else common_dir / "lfs"


def object_path(store: Path, oid: str) -> Path:
    return store / "objects" / oid[:2] / oid[2:4] / oid


def check_objects(common_dir: Path, workdir: Path, commit: str) -> None:
    """UsageError (exit 2) when the clone lacks LFS objects of `commit` (git-lfs installed and set up)."""
    missing = missing_objects(common_dir, commit, workdir)
    if missing:
        more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
        at = commit if commit == "HEAD" else commit[:12]
        raise UsageError(
            f"{workdir}: this clone lacks the LFS objects of {missing[0]}{more} at {at}; openbot checks "
            "LFS files out from your clone and never downloads them",
            hint="fetch them first with `git lfs pull`, or `git lfs fetch` then `git lfs checkout`",
        )


def missing_objects(git_dir: Path, commit: str, workdir: Path | None = None) -> list[str]:
    """The LFS files of `commit` whose objects `git_dir`'s LFS store lacks (none without git-lfs). With no
    `workdir` to read attributes in (a submodule's repository), every pointer blob counts as an LFS file."""
    if not installed() or not configured(git_dir) or not _uses_lfs(git_dir, commit):
        return []  # without git-lfs the checkout holds pointers, as the user's own would
    try:
        files = tree_pointers(git_dir, commit, workdir)
    except GitError:
        return []  # not listable: the checkout will say what is wrong, in git-lfs's own words
    store = storage(git_dir)
    return [path for path, oid in files.items() if not object_path(store, oid).is_file()]


def _uses_lfs(git_dir: Path, commit: str) -> bool:
    """A `.gitattributes` of `commit` (or the repository's info/attributes) names the lfs filter: a quick
    look (~10 ms on 20,000 files) that spares scanning the tree where git-lfs is merely installed."""
    attributes = (".gitattributes", ":(glob)**/.gitattributes")
    grep = ("grep", "-q", "-I", "-F", "-e", "filter=lfs", commit, "--", *attributes)
    found = run_git(git_dir, f"--git-dir={git_dir}", *grep, check=False).returncode == 0
    info = git_dir / "info" / "attributes"
    return found or (info.is_file() and "filter=lfs" in info.read_text(errors="replace"))


def tree_pointers(common_dir: Path, commit: str, workdir: Path | None) -> dict[str, str]:
    """path → oid of the LFS files in `commit`: pointer blobs whose path has the lfs filter (in `workdir`'s
    attributes; all of them without one)."""
    listing = git_bytes(common_dir, "ls-tree", "-r", "-l", "-z", "--full-tree", commit)
    paths_of: dict[str, list[str]] = {}
    for entry in listing.decode("utf-8", "surrogateescape").split("\0"):
        meta, _, path = entry.partition("\t")
        fields = meta.split()
        if len(fields) == 4 and fields[1] == "blob" and fields[3].isdigit() and int(fields[3]) <= POINTER_MAX:
            paths_of.setdefault(fields[2], []).append(path)
    parsed = _parse_blobs(common_dir, list(paths_of))
    candidates = {path: parsed[sha][0] for sha in parsed for path in paths_of[sha]}
    if not candidates or workdir is None:
        return candidates
    names = "".join(f"{p}\0" for p in candidates).encode("utf-8", "surrogateescape")
    out = git_bytes(common_dir, "check-attr", "-z", "--stdin", "filter", stdin=names, cwd=workdir)
    fields = out.decode("utf-8", "surrogateescape").split("\0")
    lfs_paths = {fields[i] for i in range(0, len(fields) - 2, 3) if fields[i + 2] == "lfs"}
    return {p: oid for p, oid in candidates.items() if p in lfs_paths}


def checkout_options(common_dir: Path) -> tuple[str, ...]:
    """`git -c …` options for openbot's own checkout of a run repository: read LFS objects from the user's
    store, never download. Nothing when the user has no git-lfs."""
    if not installed():
        return ()
    config = userrepo.config(common_dir, git_dir=True)  # one read for both questions
    if not configured(common_dir, config):
        return ()
    return ("-c", f"lfs.storage={storage(common_dir, config)}", *NO_DOWNLOAD)


def pointers(common_dir: Path, base: str, tip: str) -> dict[str, int]:
    """oid → size of every LFS pointer among the blobs `tip` has and `base` has not (in the user's repo)."""
    git_dir = f"--git-dir={common_dir}"
    listed = run_git(common_dir, git_dir, "rev-list", "--objects", "--no-object-names", tip, f"^{base}")
    return dict(_parse_blobs(common_dir, listed.stdout.split()).values())


def _parse_blobs(common_dir: Path, shas: list[str]) -> dict[str, tuple[str, int]]:
    """sha → (oid, size) of those of `shas` that are blobs holding an LFS pointer."""
    if not shas:
        return {}
    check = "--batch-check=%(objecttype) %(objectname) %(objectsize)"
    sizes = git_bytes(common_dir, "cat-file", check, stdin="".join(f"{s}\n" for s in shas).encode())
    small = [
        sha
        for kind, sha, size in (line.split() for line in sizes.decode().splitlines() if line.count(" ") == 2)
        if kind == "blob" and int(size) <= POINTER_MAX
    ]
    if not small:
        return {}
    found: dict[str, tuple[str, int]] = {}
    out = git_bytes(common_dir, "cat-file", "--batch", stdin="".join(f"{s}\n" for s in small).encode())
    pos = 0
    while pos < len(out):
        header_end = out.index(b"\n", pos)
        sha, _, size = out[pos:header_end].decode().split()
        body = out[header_end + 1 : header_end + 1 + int(size)]
        pos = header_end + 1 + int(size) + 1
        parsed = _parse_pointer(body)
        if parsed is not None:
            found[sha] = parsed
    return found


def _parse_pointer(body: bytes) -> tuple[str, int] | None:
    if not body.startswith(_POINTER_HEAD):
        return None
    fields = dict(line.split(" ", 1) for line in body.decode("ascii", "replace").splitlines() if " " in line)
    oid, size = fields.get("oid", "").removeprefix("sha256:"), fields.get("size", "")
    if len(oid) != 64 or any(c not in "0123456789abcdef" for c in oid) or not size.isdigit():
        return None
    return oid, int(size)


def import_objects(common_dir: Path, run_store: Path, wanted: dict[str, int]) -> list[str]:
    """Copy the `wanted` objects from the run's LFS store into the user's, verified; returns the oids that
    could not be (absent, not a plain file, or content not matching the pointer)."""
    store = storage(common_dir)
    lost = []
    for oid, size in sorted(wanted.items()):
        dest = object_path(store, oid)
        if dest.is_file():
            continue
        if not _copy_verified(object_path(run_store, oid), run_store, dest, store / "tmp", oid, size):
            lost.append(oid)
    return lost


def _copy_verified(src: Path, root: Path, dest: Path, tmp_dir: Path, oid: str, size: int) -> bool:
    if os.path.realpath(src) != os.path.join(os.path.realpath(root), os.path.relpath(src, root)):
        return False  # reached through a symlink the agent planted
    try:
        fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return False
    tmp_dir.mkdir(parents=True, exist_ok=True)
    tmp = tmp_dir / f"openbot-{secrets.token_hex(6)}"
    digest, copied = hashlib.sha256(), 0
    try:
        with os.fdopen(fd, "rb") as f, open(tmp, "xb") as out:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return False
            while chunk := f.read(1 << 20):
                digest.update(chunk)
                copied += len(chunk)
                if copied > size:
                    return False
                out.write(chunk)
        if digest.hexdigest() != oid or copied != size:
            return False
        dest.parent.mkdir(parents=True, exist_ok=True)
        os.replace(tmp, dest)
        return True
    finally:
        tmp.unlink(missing_ok=True)


def clean_into(store: Path, path: Path) -> bytes:
    """What git-lfs's clean filter makes of the file `path` (a regular file, read without following a
    link), without running git-lfs: its pointer, the content stored in `store`. A file that already is a
    pointer stays as it is, as with git-lfs. No `.lfsconfig` is read, so no extension applies."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    tmp_dir = store / "tmp"
    tmp_dir.mkdir(parents=True, exist_ok=True)
    tmp = tmp_dir / f"openbot-{secrets.token_hex(6)}"
    digest, size, head = hashlib.sha256(), 0, b""
    try:
        with os.fdopen(fd, "rb") as f, open(tmp, "xb") as out:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise OSError(f"{path} is not a regular file")
            while chunk := f.read(1 << 20):
                head += chunk[: POINTER_MAX + 1 - len(head)]
                digest.update(chunk)
                size += len(chunk)
                out.write(chunk)
        if size == 0 or size <= POINTER_MAX and _parse_pointer(head) is not None:
            return head  # git-lfs keeps an empty file empty, and a pointer as it is
        oid = digest.hexdigest()
        dest = object_path(store, oid)
        if not dest.is_file():
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.replace(tmp, dest)
        return f"{_POINTER_HEAD.decode()}oid sha256:{oid}\nsize {size}\n".encode()
    finally:
        tmp.unlink(missing_ok=True)
