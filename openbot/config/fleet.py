"""`fleet.toml`: the repositories and bots `openbot fleet run` runs, validated once.

parallel = 2                   # runs at a time (the --parallel flag wins)
bots = ["fixer", "docs"]       # every repository's bots, unless it names its own
args = ["--max-cost", "2"]     # extra `openbot run` arguments for every run (optional)

[[repo]]
path = "../app"                # relative to fleet.toml; ~ is expanded
[[repo]]
path = "/src/lib"
bots = ["docs"]
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from openbot.config.bots import check_name
from openbot.errors import ConfigError, UsageError

TOP_KEYS = ("parallel", "bots", "args", "repo")
REPO_KEYS = ("path", "bots", "args")
EXAMPLE = 'e.g. bots = ["fixer"] and [[repo]] path = "../app"'


@dataclass(frozen=True)
class FleetRun:
    repo: Path
    bot: str
    args: tuple[str, ...] = ()


@dataclass(frozen=True)
class Fleet:
    path: Path
    runs: tuple[FleetRun, ...]
    parallel: int = 2


def load_fleet(path: Path) -> Fleet:
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        values: dict[str, object] = tomlkit.parse(path.read_text(encoding="utf-8")).unwrap()
    except FileNotFoundError as e:
        raise UsageError(f"{path}: no such file", hint="openbot fleet run FLEET.toml") from e
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: unreadable: {e}") from e
    except TOMLKitError as e:
        raise ConfigError(f"{path}: invalid TOML: {e}", hint="fix the TOML syntax") from e
    _known(path, values, TOP_KEYS, "")
    parallel = values.get("parallel", 2)
    if isinstance(parallel, bool) or not isinstance(parallel, int) or parallel < 1:
        raise ConfigError(f"{path}: key 'parallel' must be a whole number >= 1, not {parallel!r}")
    bots = _names(path, values.get("bots", []), "bots")
    args = _strings(path, values.get("args", []), "args")
    repos = values.get("repo", [])
    if not isinstance(repos, list) or not repos or not all(isinstance(r, dict) for r in repos):
        raise ConfigError(f"{path}: key 'repo' must be one or more [[repo]] tables", hint=EXAMPLE)
    runs: dict[tuple[Path, str], FleetRun] = {}  # one run per repository and bot
    for n, table in enumerate(repos):
        where = f"repo[{n}]"
        _known(path, table, REPO_KEYS, f"{where}.")
        repo = _repo(path, table.get("path"), where)
        names = _names(path, table["bots"], f"{where}.bots") if "bots" in table else bots
        if not names:
            raise ConfigError(f"{path}: {where} has no bots (neither its own 'bots' nor the top-level one)")
        extra = args + _strings(path, table.get("args", []), f"{where}.args")
        for bot in names:
            runs.setdefault((repo, bot), FleetRun(repo, bot, tuple(extra)))
    return Fleet(path, tuple(runs.values()), parallel)


def _known(path: Path, table: dict[str, object], keys: tuple[str, ...], prefix: str) -> None:
    for key in table:
        if key not in keys:
            raise ConfigError(f"{path}: unknown key '{prefix}{key}'", hint=f"the keys are {', '.join(keys)}")


def _strings(path: Path, value: object, key: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{path}: key '{key}' must be a list of strings", hint=EXAMPLE)
    return list(value)


def _names(path: Path, value: object, key: str) -> list[str]:
    names = _strings(path, value, key)
    for name in names:
        try:
            check_name(name)
        except UsageError as e:
            raise ConfigError(f"{path}: key '{key}': {e.message}", hint=e.hint) from e
    return names


def _repo(path: Path, value: object, where: str) -> Path:
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{path}: key '{where}.path' must be a directory path", hint=EXAMPLE)
    repo = (path.parent / Path(value).expanduser()).resolve()
    if not repo.is_dir():
        raise ConfigError(f"{path}: key '{where}.path': {repo} is not a directory")
    return repo
