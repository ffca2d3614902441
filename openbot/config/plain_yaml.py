"""A skill's frontmatter read without PyYAML when it is the plain `key: value` kind every shipped skill
has (importing PyYAML is ~17 ms of every run's start, which loads the shipped skills).

Only lines whose YAML meaning is certain are read here — a name, a colon, then a double-quoted string
without escapes or a plain run of words that YAML cannot take for anything but a string (no booleans or
nulls such as `yes`/`off`/`null`, nothing starting with a digit or a sign, ASCII only); anything else
(a comment, a list, an escape, a CR) returns None and PyYAML reads the whole block, as before.
"""

from __future__ import annotations

import re

# YAML 1.1 words PyYAML resolves to booleans or null, and a few more to be safe.
_NOT_STRINGS = {"yes", "no", "y", "n", "true", "false", "on", "off", "null", "~"}
_LINE = re.compile(
    r"(?P<key>[A-Za-z_][A-Za-z0-9_-]*):[ ]+"
    r"(?:\"(?P<quoted>[\x20\x21\x23-\x5b\x5d-\x7e]*)\"|(?P<plain>[A-Za-z][A-Za-z0-9_.,()/' -]*?))[ ]*"
)


def plain_mapping(text: str) -> dict[str, str] | None:
    """The mapping `yaml.safe_load(text)` gives, when every line is one this module is sure of; else None."""
    found: dict[str, str] = {}
    for line in text.split("\n"):
        if not line:
            continue
        m = _LINE.fullmatch(line)
        if m is None or m["key"].lower() in _NOT_STRINGS:
            return None
        quoted, plain = m["quoted"], m["plain"]
        if plain is not None and (plain.lower() in _NOT_STRINGS or " #" in plain or ": " in plain):
            return None
        found[m["key"]] = str(quoted if quoted is not None else plain)
    return found or None
