"""`$OPENBOT_HOME/budget.toml`: the USD caps every run of this OPENBOT_HOME shares, read once per run.

    [overall]                      daily_usd = 20.0   weekly_usd = 100.0
    [bots.fixer]                   daily_usd = 5.0
    [repos.app-1a2b3c4d]           daily_usd = 10.0   (the project slug: `openbot history` shows it)

"daily" is the last 24 hours and "weekly" the last 7 days (rolling windows: a night that spans midnight is
one night). A cap left out, or 0, is no cap. No file: no ledger, nothing is recorded (openbot/state/ledger.py
keeps the spending; docs/BUDGET.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from openbot import paths
from openbot.errors import ConfigError

HOME_FILE = "budget.toml"
WINDOWS = {"daily_usd": 24 * 3600.0, "weekly_usd": 7 * 24 * 3600.0}
EXAMPLE = "e.g. [overall] daily_usd = 20.0, [bots.fixer] weekly_usd = 50.0"


@dataclass(frozen=True)
class Cap:
    """One limit: `scope` is "overall", "bot" or "repo"; `name` the bot or project slug ("" overall)."""

    scope: str
    name: str
    key: str  # daily_usd | weekly_usd
    usd: float

    @property
    def window_secs(self) -> float:
        return WINDOWS[self.key]

    def label(self) -> str:
        where = "overall" if self.scope == "overall" else f"{self.scope} {self.name}"
        return f"{self.key.removesuffix('_usd')} cap ({where}, ${self.usd:g})"


@dataclass(frozen=True)
class Caps:
    path: Path
    caps: tuple[Cap, ...] = field(default_factory=tuple)

    def applying_to(self, bot: str, project: str) -> list[Cap]:
        return [
            c for c in self.caps if c.scope == "overall" or c.name == {"bot": bot, "repo": project}[c.scope]
        ]


def home_file() -> Path:
    return paths.home() / HOME_FILE


def load_caps() -> Caps | None:
    """The caps of $OPENBOT_HOME/budget.toml; None without the file; ConfigError naming file and key."""
    from openbot.config.frontmatter import parse_toml
    from openbot.files import read_user_text

    path = home_file()
    if not path.exists() and not path.is_symlink():
        return None
    text = read_user_text(path, root=path.parent, limit=256 * 1024, what="budget file")
    values = parse_toml(text, f"{path}: invalid TOML")
    caps: list[Cap] = []
    for key, value in values.items():
        if key == "overall":
            caps += _limits(path, "overall", "", value, "overall")
        elif key in ("bots", "repos"):
            if not isinstance(value, dict):
                raise ConfigError(f"{path}: key '{key}' must be a table of names", hint=EXAMPLE)
            for name, limits in value.items():
                caps += _limits(path, key.removesuffix("s"), str(name), limits, f"{key}.{name}")
        else:
            raise ConfigError(
                f"{path}: unknown key '{key}'", hint="the tables are overall, bots.<bot>, repos.<slug>"
            )
    return Caps(path, tuple(caps))


def _limits(path: Path, scope: str, name: str, value: object, where: str) -> list[Cap]:
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: key '{where}' must be a table", hint=EXAMPLE)
    caps = []
    for key, usd in value.items():
        if key not in WINDOWS:
            raise ConfigError(
                f"{path}: unknown key '{where}.{key}'", hint="the keys are daily_usd and weekly_usd"
            )
        if isinstance(usd, bool) or not isinstance(usd, int | float) or usd < 0:
            raise ConfigError(
                f"{path}: key '{where}.{key}' must be a number of USD >= 0, not {usd!r}", hint=EXAMPLE
            )
        if usd:
            caps.append(Cap(scope, name, key, float(usd)))
    return caps


def spending(caps: Caps) -> list[dict[str, object]]:
    """Each cap with what counts against it now in the ledger (spent, and reserved by runs in flight)."""
    import time

    from openbot.state.ledger import Ledger, used_under

    entries = Ledger(paths.home()).entries()
    now = time.time()
    lost = set(unmatched(caps))
    return [
        {"cap": c.label(), "usd": c.usd, "used_usd": round(used_under(entries, c, now), 6)}
        | (
            {"matches": "matches no repository openbot has run in"}
            if c.name in lost and c.scope == "repo"
            else {}
        )
        for c in caps.caps
    ]


def unmatched(caps: Caps) -> list[str]:
    """The `[repos.<slug>]` caps naming a project no bot of this OPENBOT_HOME has run in: a typo'd slug is
    a cap that never applies, yet looks set."""
    known = {p.name for p in paths.bots_dir().glob("*/workspaces/*") if p.is_dir()}
    return sorted({c.name for c in caps.caps if c.scope == "repo" and c.name not in known})
