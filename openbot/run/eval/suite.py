"""An eval suite: the tasks `openbot eval` runs a bot over, read once from a TOML file (docs/EVAL.md).

bot = "fixer"                     # optional: `--bot` wins
[defaults]                        # optional: limits every task starts from
max_iterations = 3
[[task]]
name = "add"
repo = "repos/calc"               # a repository (relative to the suite file) … or a recipe:
files = { "calc.py" = "..." }     #   files written into a fresh repository,
commands = ["python gen.py"]      #   then these commands, then one commit
base = "main"                     # the ref the run starts from (repo only; default HEAD)
prompt = "Make add() add."
check = "python -m pytest -q"     # solved when this exits 0 on the run's result
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openbot.errors import ConfigError

LIMIT_KEYS = ("max_iterations", "max_minutes", "max_cost_usd", "check_timeout_secs")
TASK_KEYS = ("name", "repo", "files", "commands", "base", "prompt", "check", *LIMIT_KEYS)
DEFAULT_CHECK_TIMEOUT = 600.0


@dataclass(frozen=True)
class Limits:
    max_iterations: int | None = None
    max_minutes: float | None = None
    max_cost_usd: float | None = None
    check_timeout_secs: float = DEFAULT_CHECK_TIMEOUT

    def run_flags(self) -> list[str]:
        """The `openbot run` flags for the limits that are set."""
        flags: list[str] = []
        for name in ("max_iterations", "max_minutes", "max_cost_usd"):
            value = getattr(self, name)
            if value is not None:
                flags += [f"--{name.replace('_', '-')}", str(value)]
        return flags


@dataclass(frozen=True)
class Task:
    """One task: where its repository comes from, what the bot is asked, and how the result is checked."""

    name: str
    prompt: str
    check: str
    limits: Limits = Limits()
    repo: Path | None = None  # an existing repository, cloned fresh for the task
    base: str = "HEAD"
    files: dict[str, str] = field(default_factory=dict)  # the recipe (when repo is None)
    commands: tuple[str, ...] = ()
    revert: tuple[str, ...] = ()  # paths put back to their state at base^ before the run (--from-history)
    check_paths: tuple[str, ...] = ()  # paths restored from `base` before the check (--from-history)


@dataclass(frozen=True)
class Suite:
    bot: str | None
    tasks: list[Task]


def load_suite(path: Path) -> Suite:
    """Read and check a suite file; every mistake is a ConfigError naming the file, the key and the fix."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ConfigError(f"cannot read the suite {path}: {e.strerror}") from e
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: not valid TOML: {e}") from e
    unknown = sorted(set(data) - {"bot", "defaults", "task"})
    if unknown:
        raise ConfigError(f"{path}: unknown key {unknown[0]!r}", hint="use bot, [defaults], [[task]]")
    bot = data.get("bot")
    if bot is not None and not isinstance(bot, str):
        raise ConfigError(f"{path}: bot = {bot!r} must be a string (a bot name)")
    defaults = _table(path, data.get("defaults", {}), "defaults")
    _check_keys(path, "defaults", defaults, LIMIT_KEYS)
    raw = data.get("task", [])
    if not isinstance(raw, list) or not raw:
        raise ConfigError(
            f"{path}: no [[task]] tables", hint="add at least one [[task]] with prompt and check"
        )
    tasks = [_task(path, i, _table(path, t, f"task {i + 1}"), defaults) for i, t in enumerate(raw)]
    names = [t.name for t in tasks]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup:
        raise ConfigError(f"{path}: two tasks are named {dup!r}", hint="give each task its own name")
    return Suite(bot, tasks)


def _task(path: Path, index: int, raw: dict[str, object], defaults: dict[str, object]) -> Task:
    where = f"task {index + 1}"
    _check_keys(path, where, raw, TASK_KEYS)
    name = _str(path, where, raw, "name", default=f"task-{index + 1}")
    where = f"task {name!r}"
    prompt, check = _str(path, where, raw, "prompt"), _str(path, where, raw, "check")
    repo_value = raw.get("repo")
    files = raw.get("files", {})
    commands = raw.get("commands", [])
    if (repo_value is None) == (not files):
        raise ConfigError(
            f"{path}: {where} needs exactly one of `repo` or `files`",
            hint="repo = a path to a git repository, or files = {name = text} (a recipe)",
        )
    if not isinstance(files, dict) or not all(isinstance(v, str) for v in files.values()):
        raise ConfigError(f"{path}: {where}: files must be a table of file name = text")
    if not isinstance(commands, list) or not all(isinstance(c, str) for c in commands):
        raise ConfigError(f"{path}: {where}: commands must be a list of strings")
    for name_ in files:
        if Path(name_).is_absolute() or ".." in Path(name_).parts:
            raise ConfigError(f"{path}: {where}: files key {name_!r} must be a relative path inside the repo")
    repo = None
    if repo_value is not None:
        repo = (path.parent / _str(path, where, raw, "repo")).resolve()
    return Task(
        name=name,
        prompt=prompt,
        check=check,
        limits=_limits(path, where, {**defaults, **{k: raw[k] for k in LIMIT_KEYS if k in raw}}),
        repo=repo,
        base=_str(path, where, raw, "base", default="HEAD"),
        files=dict(files),
        commands=tuple(commands),
    )


def _limits(path: Path, where: str, raw: dict[str, Any]) -> Limits:
    values: dict[str, Any] = {}
    for key in LIMIT_KEYS:
        if key not in raw:
            continue
        value = raw[key]
        integral = key == "max_iterations"
        ok = isinstance(value, int) if integral else isinstance(value, int | float)
        if isinstance(value, bool) or not ok or value < 0:
            kind = "a whole number ≥ 0" if integral else "a number ≥ 0"
            raise ConfigError(f"{path}: {where}: {key} = {value!r} must be {kind}")
        values[key] = value if integral else float(value)
    return Limits(**values)


def _str(path: Path, where: str, raw: dict[str, object], key: str, default: str | None = None) -> str:
    value = raw.get(key, default)
    if value is None:
        raise ConfigError(f"{path}: {where} has no {key!r}", hint=f'add {key} = "..."')
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{path}: {where}: {key} = {value!r} must be a non-empty string")
    return value


def _table(path: Path, value: object, where: str) -> dict[str, object]:
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: {where} must be a table")
    return value


def _check_keys(path: Path, where: str, raw: dict[str, object], known: tuple[str, ...]) -> None:
    unknown = sorted(set(raw) - set(known))
    if unknown:
        raise ConfigError(f"{path}: {where}: unknown key {unknown[0]!r}", hint=f"known: {', '.join(known)}")
