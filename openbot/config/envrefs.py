"""`${NAME}` references in config values (webhook URLs, MCP server URLs and headers): secrets stay in the
environment, not in config.md, and their values are hidden wherever openbot writes or shows text.

A reference is checked for syntax when the config is validated, and resolved when a run (or doctor) starts:
an unset variable is a ConfigError naming the file, the key and the variable.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from openbot.envpolicy import NAME_RE
from openbot.errors import ConfigError

_REF_RE = re.compile(r"\$\{([^}]*)\}")


def names(template: str) -> list[str]:
    """The variable names `template` refers to."""
    return _REF_RE.findall(template)


def check(template: str, source: str, key: str) -> None:
    """Refuse `${}`, `${not a name}` and a `${` left open: they would be sent literally otherwise."""
    for name in names(template):
        if not NAME_RE.match(name):
            raise ConfigError(
                f"{source}: key '{key}' refers to ${{{name}}}, which is not a variable name",
                hint="write ${NAME} with letters, digits and underscores",
            )
    if "${" in _REF_RE.sub("", template):
        raise ConfigError(f"{source}: key '{key}' has an unclosed ${{", hint="write ${NAME}")


def expand(template: str, environ: Mapping[str, str], source: str, key: str) -> str:
    """`template` with every `${NAME}` replaced by its value; ConfigError when one is unset or empty."""
    for name in names(template):
        if not environ.get(name):
            raise ConfigError(
                f"{source}: key '{key}' uses ${{{name}}}, which is not set in the environment",
                hint=f"export {name}=… before the run, or remove the reference",
            )
    return _REF_RE.sub(lambda m: environ[m.group(1)], template)


def secret_values(templates: Iterable[str], environ: Mapping[str, str]) -> list[str]:
    """The values the templates pull from the environment: what the redactor must hide."""
    return [environ[n] for t in templates for n in names(t) if environ.get(n)]
