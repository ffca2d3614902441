"""pyproject.toml declares what openbot imports, and nothing it does not."""

from __future__ import annotations

import ast
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# distribution name -> top-level module
MODULES = {"python-frontmatter": "frontmatter", "PyYAML": "yaml"}


def imported_top_level() -> set[str]:
    names: set[str] = set()
    for path in (ROOT / "openbot").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module.split(".")[0])
    return names - set(sys.stdlib_module_names) - {"openbot"}


def test_every_imported_package_is_declared_and_every_declared_one_imported() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    dists = {d.split(">")[0].split("=")[0].split("<")[0].split("[")[0].strip() for d in declared}
    modules = {MODULES.get(d, d) for d in dists}
    assert imported_top_level() == modules
