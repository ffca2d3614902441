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
import subprocess
from pathlib import Path

from openbot.errors import GitError, UsageError
from openbot.git.gitcmd import first_line, git_env, open_repo, run_git

POINTER_MAX = 1024  # the spec's upper bound on a pointer file's size
_POINTER_HEAD = b"version https://git-lfs.github.com/spec/v1\n"
# Where git-lfs would fetch from, should an object be missing after all: a local path that does not exist.
NO_DOWNLOAD = ("-c", "lfs.url=file:///dev/null/openbot-never-downloads")


def installed() -> bool:
    return shutil.which("git-lfs") is not None


def configured(common_dir: Path) -> bool:
    """The user's git runs git-lfs on checkout (`git lfs install`: local, global or system config)."""
    config = open_repo(common_dir).config
    return any(str(entry.name).lower().startswith("filter.lfs.") for entry in config)


def storage(common_dir: Path) -> Path:
    """The user's LFS store (`lfs.storage`, relative to the git dir, or `<git dir>/lfs`)."""
    config = open_repo(common_dir).config
    value = str(config["lfs.storage"]) if "lfs.storage" in config else ""
    return (common_dir / os.path.expanduser(value)).resolve() if value else common_dir / "lfs"


def object_path(store: Path, oid: str) -> Path:
    return store / "objects" / oid[:2] / oid[2:4] / oid


def check_objects(common_dir: Path, workdir: Path, commit: str) -> None:
    """UsageError (exit 2) when the clone lacks LFS objects of `commit` (git-lfs installed and set up)."""
    if not installed() or not configured(common_dir):
        return  # the checkout holds pointers, as the user's own would
    proc = run_git(workdir, "lfs", "ls-files", "--long", commit, check=False, timeout=300)
    if proc.returncode != 0:
        return  # git-lfs could not list them: the checkout will say why, in git-lfs's own words
    store = storage(common_dir)
    missing = []
    for line in proc.stdout.splitlines():
        oid, _, rest = line.partition(" ")
        if len(oid) == 64 and not object_path(store, oid).is_file():
            missing.append(rest[2:] if rest[:2] in ("* ", "- ") else rest)
    if missing:
        more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
        at = commit if commit == "HEAD" else commit[:12]
        raise UsageError(
            f"{workdir}: this clone lacks the LFS objects of {missing[0]}{more} at {at}; openbot checks "
            "LFS files out from your clone and never downloads them",
            hint="fetch them first with `git lfs pull`, or `git lfs fetch` then `git lfs checkout`",
        )


def checkout_options(common_dir: Path) -> tuple[str, ...]:
    """`git -c …` options for openbot's own checkout of a run repository: read LFS objects from the user's
    store, never download. Nothing when the user has no git-lfs."""
    if not configured(common_dir) or not installed():
        return ()
    return ("-c", f"lfs.storage={storage(common_dir)}", *NO_DOWNLOAD)


def pointers(common_dir: Path, base: str, tip: str) -> dict[str, int]:
    """oid → size of every LFS pointer among the blobs `tip` has and `base` has not (in the user's repo)."""
    git_dir = f"--git-dir={common_dir}"
    listed = run_git(common_dir, git_dir, "rev-list", "--objects", "--no-object-names", tip, f"^{base}")
    sizes = _run(
        common_dir, ["cat-file", "--batch-check=%(objecttype) %(objectname) %(objectsize)"], listed.stdout
    )
    small = [
        sha
        for kind, sha, size in (line.split() for line in sizes.decode().splitlines() if line.count(" ") == 2)
        if kind == "blob" and int(size) <= POINTER_MAX
    ]
    if not small:
        return {}
    found: dict[str, int] = {}
    out = _run(common_dir, ["cat-file", "--batch"], "".join(f"{s}\n" for s in small))
    pos = 0
    while pos < len(out):
        header_end = out.index(b"\n", pos)
        size = int(out[pos:header_end].split()[2])
        body = out[header_end + 1 : header_end + 1 + size]
        pos = header_end + 1 + size + 1
        parsed = _parse_pointer(body)
        if parsed is not None:
            found[parsed[0]] = parsed[1]
    return found


def _run(common_dir: Path, args: list[str], stdin: str) -> bytes:
    try:
        proc = subprocess.run(
            ["git", f"--git-dir={common_dir}", *args],
            input=stdin.encode(),
            env=git_env(),
            capture_output=True,
            timeout=600,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        raise GitError(f"git {args[0]} failed in {common_dir}: {e}") from e
    if proc.returncode != 0:
        raise GitError(
            f"git {args[0]} failed in {common_dir}: {first_line(proc.stderr.decode(errors='replace'))}"
        )
    return proc.stdout


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
