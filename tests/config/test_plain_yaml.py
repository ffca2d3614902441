"""config/plain_yaml.py reads a frontmatter only when its answer is PyYAML's, and every shipped skill's
frontmatter is one it reads (so a run's start imports no PyYAML for them)."""

from __future__ import annotations

import pytest
import yaml

from openbot import paths
from openbot.config.plain_yaml import plain_mapping

CASES = [
    'name: docs-style\ndescription: "How to correct documentation: verify, keep the author\'s voice."\n',
    "\nname: a\n\ndescription: plain words, with commas (and brackets)/slashes\n",
    "name: x\nname: y\n",
    "name: first\nname: second\n",
    "name: yes\n",
    "name: No\n",
    "name: off\n",
    "name: null\n",
    "name: ~\n",
    "name: 3\n",
    "name: -x\n",
    "name: .5\n",
    "name: a: b\n",
    "name: a #comment\n",
    "name: a#b\n",
    "name: 'single'\n",
    'name: "esc\\n"\n',
    'name: "a" trailing\n',
    "name:   spaced   \n",
    "name: two  spaces inside\n",
    "yes: value\n",
    "on: value\n",
    "name:\n",
    "name: x\r\n",
    "name: caf\u00e9\n",
    "# a comment\nname: x\n",
    "- a\n- b\n",
    "name: [a, b]\n",
    "name: {a: b}\n",
    "name: x\n  continued\n",
    "name: &anchor x\n",
    "name: !tag x\n",
    "name: x\tz\n",
    "name:\tx\n",
    'name: ""\n',
    'name: "  padded  "\n',
    "Name_2-b: value\n",
    "name: y\n",
    "name: True\n",
    "name: e\n",
    "name: inf\n",
    "",
    "\n\n",
]


@pytest.mark.parametrize("text", CASES)
def test_an_answer_is_always_pyyamls(text: str) -> None:
    got = plain_mapping(text)
    if got is not None:
        assert got == yaml.safe_load(text)


def test_the_plain_cases_are_read_without_pyyaml() -> None:
    readable = [t for t in CASES if plain_mapping(t) is not None]
    assert len(readable) >= 8  # the fast path is not a path nobody takes
    assert plain_mapping("name: yes\n") is None and plain_mapping("name: a #comment\n") is None


def test_every_shipped_skill_is_plain() -> None:
    skills = sorted(paths.SHIPPED_SKILLS.glob("*.md"))
    assert skills
    for skill in skills:
        head = skill.read_text(encoding="utf-8").split("---", 2)[1]
        assert plain_mapping(head) == yaml.safe_load(head), skill.name
