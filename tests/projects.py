"""A small real Python project for tests, installable offline: `pip install -e .` works without an index
because its build backend is in the tree (PEP 517 `backend-path`, no build requirements)."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import make_repo

# A PEP 517/660 build backend in ~30 lines: an editable wheel is a .pth file naming src/.
BACKEND = """\
import base64, hashlib, os, zipfile

DIST = "mypkg-0.1"
META = {
    DIST + ".dist-info/METADATA": "Metadata-Version: 2.1\\nName: mypkg\\nVersion: 0.1\\n",
    DIST + ".dist-info/WHEEL": (
        "Wheel-Version: 1.0\\nGenerator: tiny\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"
    ),
}


def _wheel(directory, files):
    name = DIST + "-py3-none-any.whl"
    record = []
    with zipfile.ZipFile(os.path.join(directory, name), "w") as whl:
        for path, text in files.items():
            data = text.encode()
            whl.writestr(path, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append(f"{path},sha256={digest},{len(data)}")
        whl.writestr(DIST + ".dist-info/RECORD", "\\n".join([*record, DIST + ".dist-info/RECORD,,"]) + "\\n")
    return name


def get_requires_for_build_editable(config_settings=None):
    return []


def get_requires_for_build_wheel(config_settings=None):
    return []


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _wheel(wheel_directory, {"mypkg.pth": os.path.abspath("src") + "\\n", **META})


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    files = {p: open(os.path.join("src", p)).read() for p in ["mypkg/__init__.py"]}
    return _wheel(wheel_directory, {**files, **META})
"""

PYPROJECT = """\
[build-system]
requires = []
build-backend = "backend"
backend-path = ["_build"]

[project]
name = "mypkg"
version = "0.1"
"""


def python_project(path: Path) -> Path:
    """A git repository holding a package under src/, a unittest suite and an offline build backend."""
    return make_repo(
        path,
        {
            "pyproject.toml": PYPROJECT,
            "_build/backend.py": BACKEND,
            "src/mypkg/__init__.py": (
                'def answer():\n    """The answer."""\n    return 42  # TODO: compute it\n'
            ),
            "tests/test_answer.py": "import unittest\n\nimport mypkg\n\n\nclass T(unittest.TestCase):\n"
            "    def test_answer(self):\n        self.assertEqual(mypkg.answer(), 42)\n",
            "README.md": "# mypkg\n\n`mypkg.answer()` returns 42.\n",
        },
    )
