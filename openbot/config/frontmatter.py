"""The `+++` TOML frontmatter of a config.md: the split into TOML and body, the TOML read (as tomlkit
reads it; tomlkit keeps comments when `bots create` writes a config), and TOML spelling of values. The
split is two regular expressions, so reading a config imports no YAML (python-frontmatter, which this
once subclassed, imports PyYAML: ~20 ms of every run's start)."""

from __future__ import annotations

import re
from pathlib import Path

from openbot.errors import ConfigError

# One `+++` line; unlike python-frontmatter's `\s*` it cannot swallow the blank lines after it.
FM_BOUNDARY = re.compile(r"^\+{3}[ \t]*\r?$", re.MULTILINE)


def parse_toml(text: str, where: str) -> dict[str, object]:
    """The values of a TOML text, as `tomlkit.parse(text).unwrap()` gives them; an invalid text is a
    ConfigError `<where>: <tomlkit's message>`. Python's own parser reads it first (tomlkit's import and
    parse cost a run's start ~20 ms); a text it refuses goes to tomlkit, whose answer (or error) stands."""
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        pass
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        values: dict[str, object] = tomlkit.parse(text).unwrap()
    except TOMLKitError as e:
        raise ConfigError(f"{where}: {e}", hint="fix the TOML syntax") from e
    return values


def toml_value(value: object) -> str:
    """A value as it is spelled in config.md (`true`, `"text"`, `1.5`), for messages and `bots show`."""
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    if value is None:
        return "(not set)"  # an optional key's default: TOML has no null
    try:
        if isinstance(value, dict):
            table = tomlkit.inline_table()
            table.update(value)
            return table.as_string()
        return str(tomlkit.item(value).as_string())  # typed Any for some values
    except (TOMLKitError, TypeError, ValueError):
        return repr(value)


def split_frontmatter(text: str, path: Path) -> tuple[str | None, str]:
    """(TOML between the `+++` lines or None when there is none, the body); a BOM and leading blanks are ok.

    Not `frontmatter.loads`, which crashes on TOML keys named `content` or `handler` (it passes the
    metadata as keyword arguments).
    """
    text = text.lstrip("\ufeff")
    head = text.lstrip()
    if not FM_BOUNDARY.match(head):
        return None, text
    if len(FM_BOUNDARY.findall(head)) < 2:
        raise ConfigError(f"{path}: the +++ frontmatter is not closed", hint="end it with a line '+++'")
    _, fm, body = FM_BOUNDARY.split(head, 2)  # as python-frontmatter's handlers split
    return fm, body


_YAML_FENCE = re.compile(r"^-{3}[ \t]*\r?$", re.MULTILINE)
_KEY_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


def refuse_yaml_frontmatter(text: str, path: Path) -> None:
    """A `---` block of `key: value` lines (as in skills) would silently become instructions: refuse it."""
    head = text.lstrip("\ufeff").lstrip()
    if not _YAML_FENCE.match(head):
        return
    parts = _YAML_FENCE.split(head, 2)
    if len(parts) < 3:
        return
    import yaml

    try:
        meta = yaml.safe_load(parts[1])
    except yaml.YAMLError:
        return  # not YAML at all: a markdown rule and text, which are instructions
    if (
        not isinstance(meta, dict)
        or not meta
        or not all(isinstance(k, str) and _KEY_RE.match(k) for k in meta)
    ):
        return
    key, value = next(iter(meta.items()))
    value = "..." if value is None else value
    raise ConfigError(
        f"{path}: config.md frontmatter must be TOML between +++ lines, not YAML between ---",
        hint=f"replace both --- lines with +++ and write keys as TOML, e.g. {key} = {toml_value(value)}",
    )
