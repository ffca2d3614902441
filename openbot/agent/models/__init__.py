"""Model backends behind one Protocol (`agent.models.base.ModelBackend`), chosen by `registry.load_backend`.

This module is the one parser of model names: `scripted:<path>` replays a script offline, anything else
names a Claude model. It imports nothing heavy, so config validation and `doctor` can use it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

SCRIPTED = "scripted:"


@dataclass(frozen=True)
class ModelName:
    """A parsed model name: which backend, and what it names (a Claude model, or a script's path)."""

    backend: Literal["anthropic", "scripted"]
    target: str

    @property
    def script(self) -> Path | None:
        return Path(self.target).expanduser() if self.backend == "scripted" else None

    def __str__(self) -> str:
        return SCRIPTED + self.target if self.backend == "scripted" else self.target


def parse_model(name: str) -> ModelName:
    if name.startswith(SCRIPTED):
        return ModelName("scripted", name.removeprefix(SCRIPTED))
    return ModelName("anthropic", name)


def scripted_name(path: Path | str) -> str:
    """The model name that replays the script at `path`."""
    return f"{SCRIPTED}{path}"


def resolve_script(name: str, base_dir: Path) -> str:
    """A `scripted:` name with its path made absolute (relative paths are `base_dir`'s); others unchanged."""
    script = parse_model(name).script
    if script is None:
        return name
    return scripted_name(script if script.is_absolute() else (base_dir / script).resolve())
