"""How a bot's work is checked: its `verify` commands plus the team's, read once when a run starts.

The commands come from what the user controls: the bot's config.md as loaded by the plan (a committed
bot's as the user trusted it, never as the agent later edits it) and `$OPENBOT_HOME/verify.toml`, whose
`verify` list applies to every bot (the team's stop hooks: one mechanism, run after the bot's own).
Where nothing is declared, `suggest` reads the repository's own test and CI config for `bots show`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openbot import paths
from openbot.errors import ConfigError

if TYPE_CHECKING:
    from openbot.config.keys import BotConfig

HOME_FILE = "verify.toml"
HOME_KEYS = ("verify",)


@dataclass(frozen=True)
class VerifySpec:
    """The verification a run applies; `commands` empty means there is nothing to verify."""

    commands: tuple[str, ...]
    timeout_secs: float
    attempts: int
    merge_unverified: bool
    team: tuple[str, ...] = ()  # the ones $OPENBOT_HOME/verify.toml added (also in `commands`)


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


def spec_for(config: BotConfig) -> VerifySpec:
    """The run's verification: the bot's commands, then the team's."""
    team = team_commands()
    return VerifySpec(
        commands=(*config.verify, *team),
        timeout_secs=config.verify_timeout_secs,
        attempts=config.verify_attempts,
        merge_unverified=config.merge_unverified,
        team=team,
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
    if not commands or not config.setup or not config.setup_network or config.network:
        return ""
    return (
        "the verify commands' setup runs in a checkout of the bot's work, so without setup_network and "
        "without the cache: a setup that downloads fails there and every check with it (docs/VERIFY.md)"
    )


def describe(config: BotConfig, root: Path | None) -> tuple[dict[str, Any], list[str]]:
    """What `bots show` says of the bot's verification: (its --json object, its lines)."""
    spec = spec_for(config)
    own = list(config.verify)
    found = suggest(root) if not spec.commands else []
    doc = {"commands": own, "team": list(spec.team), "suggested": found}
    if spec.commands:
        lines = [f"  `{c}` (config.md)" for c in own] + [f"  `{c}` ({home_file()})" for c in spec.team]
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
