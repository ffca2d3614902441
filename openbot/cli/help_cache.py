"""`--help` in a terminal without typer: what typer printed there before, kept per user and per rendering.

The stored text (`cli/stored_help.py`) is the plain 80-column rendering; a terminal gets colour and its own
width, which only typer and rich can render. So the first `openbot [commands] --help` in a given terminal
is rendered by typer while a tee keeps what it writes to stdout; when it was help (an invocation help.json
lists, the exit status help.json gives, nothing on stderr) the text is kept under
`${XDG_CACHE_HOME:-~/.cache}/openbot/help/`, keyed by everything that decides the rendering (`key`). The
next one with the same key is that text, printed without importing typer, rich or pydantic. A damaged,
foreign or unreadable entry is rendered again; a cache directory that cannot be written means no cache.
"""

from __future__ import annotations

import json
import os
import sys

from openbot import __version__
from openbot.cli import stored_help

TYPE_CHECKING = False  # typing costs ~3 ms to import, more than the rest of this path
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TextIO

try:  # the builtin sha256: hashlib brings in OpenSSL (~3 ms)
    from _sha256 import sha256
except ImportError:  # Python 3.12 renamed it _sha2; hashlib costs those 3 ms there, on the cache's path only
    from hashlib import sha256

FORMAT = 1  # bump when the entry's layout or the key's meaning changes
KEEP = 256  # entries kept (about 10 KB each); the oldest go first
# Read by rich or typer beyond stored_help.RENDERING_ENV: the colour system and a dumb terminal (TERM,
# COLORTERM), the height (LINES, JUPYTER_LINES), and gettext's language for typer's panel titles.
MORE_ENV = ("TERM", "COLORTERM", "LINES", "JUPYTER_LINES", "LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")
LIBRARIES = ("typer", "rich")  # typer vendors click, so its version covers click's


class Entry:
    """Where typer's rendering for this key goes, and the status help exits with."""

    def __init__(self, path: str, key: str, code: int) -> None:
        self.path, self.key, self.code = path, key, code


def cache_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):  # the XDG spec: a relative or empty value is ignored
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "openbot", "help")


def serve(argv: list[str]) -> Entry | None:
    """Print the kept rendering and exit; else where typer's rendering should be kept (None: not help, or
    nothing to key it by, so typer renders without a tee)."""
    if "_OPENBOT_COMPLETE" in os.environ:
        return None  # completion answers from COMP_WORDS, which no key here holds
    loaded = stored_help.load()
    found = None if loaded is None else loaded[1]["argv"].get(" ".join(argv))
    if loaded is None or found is None:
        return None  # not an invocation that prints help (a run, an unknown command, options before --help)
    k = key(argv, loaded[0], sys.stdout)
    if k is None:
        return None
    entry = Entry(os.path.join(cache_dir(), sha256(k.encode()).hexdigest()[:40] + ".json"), k, found[0])
    text = _read(entry)
    if text is not None:
        stored_help.emit(entry.code, text)
    return entry


def key(argv: list[str], help_json: bytes, stdout: TextIO) -> str | None:
    """Everything the rendering depends on, as one string; None when a library's version cannot be told."""
    libraries = [_library(name) for name in LIBRARIES]
    if None in libraries:
        return None
    main = sys.modules.get("__main__")
    parts = {
        "format": FORMAT,
        "python": sys.version,
        "openbot": [__version__, sha256(help_json).hexdigest(), _sources()],
        "libraries": libraries,
        "env": {name: os.environ.get(name) for name in (*stored_help.RENDERING_ENV, *MORE_ENV)},
        "ttys": [_isatty(fd) for fd in (0, 1, 2)],
        "width": _width(),
        "stdout": [getattr(stdout, "encoding", None), getattr(stdout, "errors", None), _isatty(stdout)],
        "argv": argv,
        "prog": [sys.argv[0], getattr(main, "__package__", None)],  # click names `python -m openbot` apart
    }
    return json.dumps(parts, sort_keys=True)


def _library(name: str) -> list[Any] | None:
    """Where `import name` would load it from, that file's stat, and its installed version(s)."""
    try:
        spec = None
        for finder in sys.meta_path:  # as import looks, without importing
            find = getattr(finder, "find_spec", None)
            spec = find(name, None) if find is not None else None
            if spec is not None:
                break
        if spec is None or not spec.origin:
            return None
        site = os.path.dirname(os.path.dirname(spec.origin))
        prefix = name + "-"
        dists = sorted(
            e.name for e in os.scandir(site) if e.name.startswith(prefix) and e.name.endswith(".dist-info")
        )
        st = os.stat(spec.origin)
    except (OSError, ImportError, ValueError):
        return None
    return [spec.origin, st.st_mtime_ns, st.st_size, dists] if dists else None


def _sources() -> list[list[object]]:
    """The CLI modules' stat: a change to a help string's markup changes the colours, not help.json."""
    here = os.path.dirname(os.path.abspath(__file__))
    found = []
    for e in os.scandir(here):
        if e.name.endswith(".py"):
            st = e.stat()
            found.append([e.name, st.st_mtime_ns, st.st_size])
    return sorted(found)


def _isatty(stream: TextIO | int) -> bool:
    try:
        return os.isatty(stream) if isinstance(stream, int) else stream.isatty()
    except (OSError, ValueError):
        return False


def _width() -> int | None:
    """The width rich takes when COLUMNS is unset: the first of stdin, stdout, stderr that is a terminal.
    The height is left out: typer's help does not depend on it (tests/cli/test_help_cache.py)."""
    for fd in (0, 1, 2):
        try:
            return os.get_terminal_size(fd).columns
        except (OSError, ValueError):
            continue
    return None


def _read(entry: Entry) -> str | None:
    """The kept text for this key; None when absent, damaged, for another key, or not the user's own."""
    try:
        fd = os.open(entry.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            if st.st_uid != os.getuid() or st.st_mode & 0o022:
                return None  # written by someone else, or writable by others: not taken as ours
            data = json.loads(f.read().decode("utf-8"))
        text = data["text"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    ok = data.get("key") == entry.key and data.get("code") == entry.code and isinstance(text, str)
    return text if ok and text else None


class _Tee:
    """A text stream that keeps what is written and passes it on: rich and click see the real stream's
    isatty, encoding and fileno, so what is kept is exactly what the terminal was sent."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.kept: list[str] = []

    def write(self, text: str) -> int:
        written = self.stream.write(text)  # first: click probes with write(b""), which a text stream refuses
        self.kept.append(text)
        return written

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def record(entry: Entry, run: Callable[[], None]) -> None:
    """Run typer (`run`), keeping its stdout; when it exited as help does, store it for `entry`."""
    out, err = _Tee(sys.stdout), _Tee(sys.stderr)
    code: object = None
    sys.stdout, sys.stderr = out, err
    try:
        run()
    except SystemExit as e:
        code = e.code
        raise
    finally:
        sys.stdout, sys.stderr = out.stream, err.stream
        if code == entry.code and out.kept and not err.kept:
            _store(entry, "".join(out.kept))


def _store(entry: Entry, text: str) -> None:
    """Atomically, user-only; any failure (a read-only or missing directory, a full disk) means no cache."""
    import tempfile

    directory = os.path.dirname(entry.path)
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".json")  # mode 0600
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump({"key": entry.key, "code": entry.code, "text": text}, f, ensure_ascii=False)
            os.replace(tmp, entry.path)
        except BaseException:
            os.unlink(tmp)
            raise
        _prune(directory)
    except OSError:
        pass


def _prune(directory: str) -> None:
    """Keep the newest KEEP entries: keys change with every version, width and terminal."""
    entries = [e for e in os.scandir(directory) if e.name.endswith(".json") and not e.name.startswith(".")]
    if len(entries) > KEEP:
        entries.sort(key=lambda e: e.stat().st_mtime_ns)
        for e in entries[: len(entries) - KEEP]:
            os.unlink(e.path)
