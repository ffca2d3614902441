"""The user's editable install of the repository, pointed at the bot's checkout.

With the user's dev environment on PATH (`pip install -e .` in a venv), the python the bot's commands run
imports the package from the *user's* checkout: the `__editable__` .pth (a path, or a finder with a
MAPPING) names the user's directory, so the bot would test code it did not change. openbot finds those
entries that point into the repository and gives the bot's commands PYTHONPATH with the same directories
in the bot's checkout; PYTHONPATH comes before every .pth path and editable finder, so the bot's own code
is what imports. Said in one line at the start of the run. Read-only: nothing of the user's is changed.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
from pathlib import Path

_MAPPING_RE = re.compile(r"^MAPPING\s*(?::[^=]*)?=\s*(\{.*\})\s*$", re.MULTILINE)
_READ_LIMIT = 256 * 1024


def _site_dirs(env: dict[str, str]) -> list[Path]:
    """site-packages of the venv whose python the bot's commands find first, and the user site."""
    search = env.get("PATH", "")
    found = shutil.which("python3", path=search) or shutil.which("python", path=search)
    dirs: list[Path] = []
    if found:
        prefix = Path(found).parent.parent  # not resolved: a venv's python is a link to the base one
        if (prefix / "pyvenv.cfg").is_file():
            dirs += sorted(prefix.glob("lib/python3*/site-packages"))
    if env.get("HOME"):
        dirs += sorted(Path(env["HOME"]).glob(".local/lib/python3*/site-packages"))
    return dirs


def _read(path: Path) -> str:
    try:
        with open(path, "rb") as f:
            return f.read(_READ_LIMIT).decode("utf-8", "replace")
    except OSError:
        return ""


def _roots_in(site: Path, pth: Path) -> list[str]:
    """The directories a .pth adds: its path lines, or the parents of its editable finder's MAPPING."""
    roots: list[str] = []
    for line in _read(pth).splitlines():
        line = line.strip()
        if line.startswith("import ") and (m := re.match(r"import (__editable___\w+_finder)", line)):
            found = _MAPPING_RE.search(_read(site / f"{m.group(1)}.py"))
            try:
                mapping = ast.literal_eval(found.group(1)) if found else {}
            except (ValueError, SyntaxError):
                mapping = {}
            roots += [str(Path(v).parent) for v in mapping.values() if isinstance(v, str)]
        elif line and not line.startswith("#") and not line.startswith("import"):
            roots.append(line)
    return roots


def editable_paths(env: dict[str, str], repo_root: Path, checkout: Path) -> list[str]:
    """The bot's-checkout twins of the import roots the user's editable installs take from `repo_root`."""
    if checkout == repo_root:
        return []
    mapped: list[str] = []
    for site in _site_dirs(env):
        for pth in sorted(site.glob("*.pth")):
            for root in _roots_in(site, pth):
                rel = os.path.relpath(os.path.realpath(root), os.path.realpath(repo_root))
                if os.path.isabs(root) and not rel.startswith(".."):
                    twin = str(checkout / rel) if rel != "." else str(checkout)
                    mapped += [twin] if twin not in mapped else []
    return mapped
