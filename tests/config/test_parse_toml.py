"""config/frontmatter.parse_toml reads TOML as tomlkit does (Python's parser first): the same values for
every shipped config and for TOML's corners, and tomlkit's own message for a text that is not TOML."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import tomlkit
from tomlkit.exceptions import TOMLKitError

from openbot import paths
from openbot.config.frontmatter import parse_toml, split_frontmatter
from openbot.errors import ConfigError

CORNERS = [
    "",
    'model = "claude-sonnet-5-5"\nmax_iterations = 3\nsleep_secs = 0.5\n',
    "a.b.c = 1\n\"quoted key\" = \"v\"\n'lit' = 'C:\\\\path'\n",
    "inline = { x = 1, y = [1, 2, { z = 'w' }] }\n",
    "[[notify]]\ncommand = 'a'\n[[notify]]\nurl = \"https://x\"\n",
    '[mcp_servers.fs]\ncommand = "npx"\nargs = ["-y", "srv"]\n[mcp_servers.fs.env]\nK = "${K}"\n',
    "s = \"\"\"\nmulti\\\n  line\"\"\"\nt = '''raw\\n'''\n",
    'u = "\\u00e9\\t\\U0001F600"\n',
    "i = 1_000\nh = 0xff\no = 0o17\nb = 0b101\nneg = -7\nf = 6.02e23\ng = -0.0\n",
    "pos = +inf\nneg = -inf\n",
    "d = 1979-05-27\nt = 07:32:00\ndt = 1979-05-27T07:32:00\nodt = 1979-05-27T07:32:00-08:00\n",
    "# only a comment\n\n",
    "arr = [\n  1,\n  2, # two\n]\n",
]
INVALID = ["a = ", "a = 1\na = 2\n", "[t]\n[t]\n", "x = [1, 2", 's = "unclosed', "= 1", "a = 1979-13-45\n"]


def _shipped() -> list[str]:
    texts = []
    for config in sorted(paths.SHIPPED_BOTS.glob("*/config.md")):
        fm, _ = split_frontmatter(config.read_text(encoding="utf-8"), config)
        texts.append(fm or "")
    return texts


@pytest.mark.parametrize("text", [*CORNERS, *_shipped()])
def test_the_values_are_tomlkits(text: str) -> None:
    assert parse_toml(text, "x") == tomlkit.parse(text).unwrap()


def test_nan_is_nan() -> None:
    assert math.isnan(float(str(parse_toml("n = nan\n", "x")["n"])))


@pytest.mark.parametrize("text", INVALID)
def test_an_invalid_text_is_tomlkits_error(text: str, tmp_path: Path) -> None:
    with pytest.raises(TOMLKitError) as theirs:
        tomlkit.parse(text)
    with pytest.raises(ConfigError) as ours:
        parse_toml(text, f"{tmp_path}/config.md: invalid TOML")
    assert ours.value.message == f"{tmp_path}/config.md: invalid TOML: {theirs.value}"
