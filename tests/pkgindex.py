"""A PEP 503 package index on loopback for tests that install with pip, offline: wheels built here from a
few files, or repacked from distributions installed in the test's own environment (pytest and its
requirements), served by http.server. It records every request it answers."""

from __future__ import annotations

import base64
import hashlib
import http.server
import importlib.metadata as md
import re
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from packaging.requirements import Requirement


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def wheel(
    out: Path, name: str, version: str, files: dict[str, bytes], requires: tuple[str, ...] = ()
) -> Path:
    """A pure-Python wheel of `files` (paths inside site-packages)."""
    dist = f"{name.replace('-', '_')}-{version}"
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    meta += "".join(f"Requires-Dist: {r}\n" for r in requires)
    info = {
        f"{dist}.dist-info/METADATA": meta.encode(),
        f"{dist}.dist-info/WHEEL": b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    return _zip(out / f"{dist}-py3-none-any.whl", {**files, **info}, f"{dist}.dist-info/RECORD")


def _zip(path: Path, files: dict[str, bytes], record: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as z:
        lines = []
        for name, data in files.items():
            z.writestr(name, data)
            lines.append(_record_line(name, data))
        z.writestr(record, "\n".join([*lines, f"{record},,"]) + "\n")
    return path


def repack(dist_name: str, out: Path) -> Path:
    """A wheel of an installed pure-Python distribution, from its installed files."""
    dist = md.distribution(dist_name)
    files: dict[str, bytes] = {}
    info_dir = ""
    for f in dist.files or []:
        parts = Path(str(f)).parts
        if "__pycache__" in parts or parts[0] == ".." or f.name in ("RECORD", "INSTALLER", "direct_url.json"):
            continue
        if parts[0].endswith(".dist-info"):
            info_dir = parts[0]
        files[str(f)] = Path(str(f.locate())).read_bytes()
    name, version = dist.metadata["Name"], dist.version
    return _zip(out / f"{name.replace('-', '_')}-{version}-py3-none-any.whl", files, f"{info_dir}/RECORD")


def closure(names: list[str]) -> list[str]:
    """`names` and everything they require here (markers evaluated, extras not followed)."""
    seen: dict[str, None] = {}
    todo = list(names)
    while todo:
        name = _norm(todo.pop())
        if name in seen:
            continue
        seen[name] = None
        for text in md.requires(name) or []:
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return list(seen)


@contextmanager
def serve(wheels: Path) -> Iterator[tuple[int, list[str]]]:
    """(port, requested paths) of an index at http://localhost:<port>/simple/ over the wheels in `wheels`."""
    root = wheels.parent / "index-root"
    (root / "simple").mkdir(parents=True, exist_ok=True)
    (root / "files").mkdir(parents=True, exist_ok=True)
    projects: dict[str, list[Path]] = {}
    for whl in sorted(wheels.glob("*.whl")):
        (root / "files" / whl.name).write_bytes(whl.read_bytes())
        projects.setdefault(_norm(whl.name.split("-")[0]), []).append(whl)
    for project, whls in projects.items():
        sums = {w.name: hashlib.sha256(w.read_bytes()).hexdigest() for w in whls}
        links = "".join(f'<a href="../../files/{n}#sha256={h}">{n}</a>\n' for n, h in sums.items())
        (root / "simple" / project).mkdir(parents=True, exist_ok=True)
        (root / "simple" / project / "index.html").write_text(f"<html><body>\n{links}</body></html>\n")
    listing = "".join(f'<a href="{p}/">{p}</a>\n' for p in projects)
    (root / "simple" / "index.html").write_text(f"<html><body>\n{listing}</body></html>\n")
    requests: list[str] = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, directory=str(root), **kwargs)  # type: ignore[arg-type]

        def do_GET(self) -> None:
            requests.append(self.path)
            super().do_GET()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1], requests
    finally:
        server.shutdown()
        server.server_close()
