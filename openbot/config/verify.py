"""How a bot's work is checked: its `verify` commands plus the team's, read once when a run starts.

The commands come from what the user controls: the bot's config.md as loaded by the plan (a committed
bot's as the user trusted it, never as the agent later edits it) and `$OPENBOT_HOME/verify.toml`, whose
`verify` list applies to every bot (the team's stop hooks: one mechanism, run after the bot's own).
Where nothing is declared, `suggest` reads the repository's own test and CI config for `bots show`, and
`evident` picks the one test command a run then checks the work with (`verify = []` turns it off).
"""

from __future__ import annotations

import itertools
import json
import re
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openbot import paths
from openbot.errors import ConfigError

if TYPE_CHECKING:
    from openbot.config.keys import BotConfig

HOME_FILE = "verify.toml"
EVIDENT = "evident test command; `verify = []` turns it off"
HOME_KEYS = ("verify",)


@dataclass(frozen=True)
class VerifySpec:
    """The verification a run applies; `commands` empty means there is nothing to verify."""

    commands: tuple[str, ...]
    timeout_secs: float
    attempts: int
    merge_unverified: bool
    team: tuple[str, ...] = ()  # the ones $OPENBOT_HOME/verify.toml added (also in `commands`)
    evident: str = ""  # the repository's evident test command, used because nothing was declared


def check_commands(value: list[str], source: str, key: str = "verify") -> None:
    """Each command is a non-empty line of shell; an empty one would pass without checking anything."""
    for command in value:
        if not command.strip():
            raise ConfigError(
                f"{source}: key '{key}' has an empty command", hint='e.g. verify = ["python -m pytest -q"]'
            )


def home_file() -> Path:
    return paths.home() / HOME_FILE


def team_commands() -> tuple[str, ...]:
    """`verify` of $OPENBOT_HOME/verify.toml (none when the file does not exist); ConfigError otherwise."""
    from openbot.config.frontmatter import parse_toml
    from openbot.files import read_user_text

    path = home_file()
    if not path.exists() and not path.is_symlink():
        return ()
    text = read_user_text(path, root=path.parent, limit=256 * 1024, what="verify file")
    values = parse_toml(text, f"{path}: invalid TOML")
    for key in values:
        if key not in HOME_KEYS:
            raise ConfigError(f"{path}: unknown key '{key}'", hint='the file holds verify = ["command", ...]')
    commands = values.get("verify", [])
    if not isinstance(commands, list) or not all(isinstance(c, str) for c in commands):
        raise ConfigError(
            f"{path}: key 'verify' must be a list of strings", hint='e.g. verify = ["make lint"]'
        )
    check_commands(commands, str(path))
    return tuple(commands)


def spec_for(config: BotConfig, root: Path | None = None, declared: bool = True) -> VerifySpec:
    """The run's verification: the bot's commands, then the team's; where neither declares any and the
    bot's config does not set `verify` (`declared`), the evident test command of the repository at `root`."""
    team = team_commands()
    found = evident(root) if root is not None and not declared and not config.verify and not team else ""
    return VerifySpec(
        commands=(*config.verify, *team) or ((found,) if found else ()),
        timeout_secs=config.verify_timeout_secs,
        attempts=config.verify_attempts,
        merge_unverified=config.merge_unverified,
        team=team,
        evident=found,
    )


_MAKE_TEST = re.compile(r"^(test|check)\s*:", re.M)


def suggest(root: Path | None) -> list[str]:
    """What the repository's own config implies its checks are; a suggestion for `bots show`, never used."""
    if root is None:
        return []
    found: list[str] = []
    pyproject = _read(root / "pyproject.toml")
    if "pytest" in pyproject or (root / "pytest.ini").is_file() or (root / "conftest.py").is_file():
        found.append("python -m pytest -q")
    if "[tool.ruff" in pyproject or (root / "ruff.toml").is_file():
        found.append("ruff check .")
    try:
        scripts = json.loads(_read(root / "package.json") or "{}").get("scripts", {})
    except (json.JSONDecodeError, AttributeError):
        scripts = {}
    if isinstance(scripts, dict) and "test" in scripts:
        found.append("npm test")
    make = _MAKE_TEST.search(_read(root / "Makefile"))
    if make:
        found.append(f"make {make.group(1)}")
    found += [c for c in _workflow_runs(root) if c not in found]
    return found[:8]


NPM_PLACEHOLDER = "no test specified"  # `npm init`'s test script, which always fails


def evident(root: Path) -> str:
    """The repository's evident test command, first match (docs/VERIFY.md): Python tests pytest collects
    (test functions or classes, unittest cases) run by pytest where a `pytest` is on PATH, else by the
    standard library's unittest where they use it; test scripts (test*.py at the top with neither: their
    asserts run when run) each run with python3; `npm test` (not npm init's placeholder); a Makefile's
    `test`/`check` target. "" when none is. Lint and CI lines are left out: they need tools the sandbox
    may lack, and only a test shows the work does what it should."""
    tests = {f: _read(f) for f in _python_tests(root)}
    collected = [f for f, text in tests.items() if _COLLECTED.search(text)]
    src = "PYTHONPATH=src " if _src_layout(root) else ""  # a src layout's package imports from src
    if collected and shutil.which("pytest"):
        return src + ("python -m pytest -q" if shutil.which("python") else "python3 -m pytest -q")
    unittest = _unittest(root, [f for f in collected if _UNITTEST.search(tests[f])])
    if unittest:
        return src + unittest
    scripts = [f.name for f in tests if f.parent == root and f not in collected][:5]
    if scripts:
        return src + " && ".join(f"python3 {shlex.quote(name)}" for name in scripts)
    return _npm_or_make(root)


def _unittest(root: Path, files: list[Path]) -> str:
    """unittest's command for the shallowest directory of `files`: discovered from the directory that
    holds the tests, importable from the first directory above it that is no package (`-t`)."""
    if not files:
        return ""
    where = min({f.parent for f in files}, key=lambda d: (len(d.parts), str(d)))
    if where == root:
        return "python3 -m unittest"
    top = where
    while (top / "__init__.py").is_file() and top.parent != root.parent:
        top = top.parent
    rel = shlex.quote(where.relative_to(root).as_posix())
    if top == where:
        return f"python3 -m unittest discover -s {rel}"
    return f"python3 -m unittest discover -s {rel} -t {shlex.quote(top.relative_to(root).as_posix() or '.')}"


def _src_layout(root: Path) -> bool:
    src = root / "src"
    return src.is_dir() and any((d / "__init__.py").is_file() for d in itertools.islice(src.iterdir(), 50))


def _npm_or_make(root: Path) -> str:
    try:
        scripts = json.loads(_read(root / "package.json") or "{}").get("scripts", {})
    except (json.JSONDecodeError, AttributeError):
        scripts = {}
    test = scripts.get("test") if isinstance(scripts, dict) else None
    if isinstance(test, str) and NPM_PLACEHOLDER not in test and shutil.which("npm"):
        return "npm test"
    make = _MAKE_TEST.search(_read(root / "Makefile"))
    return f"make {make.group(1)}" if make and shutil.which("make") else ""


# unittest finds no pytest-style test (and passes): only files that import it count for it
_UNITTEST = re.compile(r"^\s*(import unittest|from unittest\b)", re.M)
_COLLECTED = re.compile(r"^\s*((async\s+)?def test|class Test|import unittest|from unittest\b)", re.M)
TEST_DIRS = ("tests", "test")


def _python_tests(root: Path) -> list[Path]:
    """Test files at the top, in tests/ or test/, and in a package's own tests (pkg/tests, src/pkg/tests)."""
    found = [*root.glob("test*.py"), *root.glob("*_test.py")]
    places = [root / d for d in TEST_DIRS]
    for parent in (root, root / "src"):
        packages = sorted(parent.glob("*/__init__.py"))[:20] if parent.is_dir() else []
        places += [p.parent / d for p in packages for d in TEST_DIRS]
    for where in places:
        if where.is_dir():
            found += itertools.islice(where.rglob("test*.py"), 50)
    return sorted(f for f in found if f.is_file())[:100]


def _workflow_runs(root: Path) -> list[str]:
    """One-line `run:` steps of .github/workflows that look like checks (test, lint, check)."""
    runs: list[str] = []
    workflows = root / ".github" / "workflows"
    files = sorted(workflows.glob("*.y*ml")) if workflows.is_dir() else []
    for path in files[:20]:
        for match in re.finditer(r"^\s*-?\s*run:\s*(\S.*)$", _read(path), re.M):
            command = match.group(1).strip().strip("\"'")
            if command not in ("|", ">") and re.search(r"\b(test|pytest|lint|check|ruff|mypy)\b", command):
                runs.append(command)
    return runs


def _read(path: Path) -> str:
    """A repository file, if it is a regular one inside the repository (no FIFO, no link out)."""
    from openbot.files import read_text_capped

    try:
        return read_text_capped(path, root=path.parent, limit=256 * 1024, errors="replace")[0]
    except (OSError, ConfigError):
        return ""


def setup_caveat(config: BotConfig, commands: tuple[str, ...]) -> str:
    """What a bot whose setup downloads should know: the check's setup runs the agent's work, offline."""
    from openbot.config.netconfig import check_list

    if not commands or not config.setup or not config.setup_network or config.network is True:
        return ""
    if check_list(config.setup_network, config.verify_network, config.network) is not None:
        return ""
    return (
        "the verify commands' setup runs in a checkout of the bot's work, so without setup_network and "
        "without the cache: a setup that downloads fails there and every check with it (docs/VERIFY.md)"
    )


def describe(config: BotConfig, root: Path | None, declared: bool = True) -> tuple[dict[str, Any], list[str]]:
    """What `bots show` says of the bot's verification: (its --json object, its lines)."""
    spec = spec_for(config, root, declared)
    own = list(config.verify)
    found = suggest(root) if not spec.commands else []
    doc = {"commands": own, "team": list(spec.team), "suggested": found, "evident": spec.evident}
    if spec.commands:
        lines = [f"  `{c}` (config.md)" for c in own] + [f"  `{c}` ({home_file()})" for c in spec.team]
        lines += [f"  `{spec.evident}` ({EVIDENT})"] if spec.evident else []
        caveat = setup_caveat(config, spec.commands)
        lines += [f"  note: {caveat}"] if caveat else []
        return doc, ["verification: openbot runs, on a clean checkout of the committed work:", *lines]
    merge = (
        "merge_unverified = true: merge applies anyway" if spec.merge_unverified else "merge is not applied"
    )
    lines = [f"verification: none — the bot declares no `verify` commands: nothing is checked ({merge})"]
    if found:
        listed = ", ".join(json.dumps(c) for c in found)
        lines.append(f"  suggested by this repository's test/CI config (not applied): verify = [{listed}]")
    return doc, lines
