"""config.md parsing: defaults, validation errors that name file and key, render round trip, precedence."""

from __future__ import annotations

from pathlib import Path

import pytest

from openbot.config import DEFAULT_MODEL, BotConfig, load_bot_file, parse_text, render, resolve, validate
from openbot.errors import ConfigError

P = Path("/bots/demo/config.md")


def parse_error(text: str) -> ConfigError:
    with pytest.raises(ConfigError) as e:
        parse_text(text, P)
    return e.value


def test_defaults() -> None:
    c = BotConfig()
    assert (c.model, c.max_iterations, c.sandbox, c.sandbox_fallback) == (
        DEFAULT_MODEL,
        10,
        "workspace-write",
        "error",
    )
    assert c.env_passthrough == [] and c.shipped_skills == [] and c.network is False
    assert BotConfig().env_passthrough is not c.env_passthrough  # no shared mutable default


def test_missing_frontmatter_is_all_defaults_and_whole_file_is_instructions() -> None:
    text = "# Fix bugs\n\nmodel = 'not config'\n"
    bf = parse_text(text, P)
    assert bf.config == BotConfig() and bf.values == {}
    assert bf.instructions == text.strip()


def test_values_and_instructions() -> None:
    bf = parse_text('+++\nmodel = "scripted:x.json"\nmax_iterations = 3\n+++\n\nDo it.\n', P)
    assert bf.config.model == "scripted:x.json" and bf.config.max_iterations == 3
    assert bf.values == {"model": "scripted:x.json", "max_iterations": 3}
    assert bf.instructions == "Do it."


def test_unknown_key_names_file_key_and_suggestion() -> None:
    e = parse_error("+++\nmax_iteration = 3\n+++\n")
    assert str(P) in e.message and "'max_iteration'" in e.message
    assert "max_iterations" in e.hint


@pytest.mark.parametrize("key", ["content", "handler"])
def test_keys_that_crashed_python_frontmatter_are_unknown_keys(key: str) -> None:
    # Bug fixed: frontmatter.loads raised TypeError (a traceback) for these names.
    e = parse_error(f'+++\n{key} = "x"\n+++\nbody\n')
    assert f"unknown key '{key}'" in e.message


@pytest.mark.parametrize(
    ("line", "key", "expected"),
    [
        ('max_iterations = "3"', "max_iterations", "an integer"),
        ("max_iterations = true", "max_iterations", "an integer"),
        ("max_iterations = 2.5", "max_iterations", "an integer"),
        ("network = 1", "network", "true or false"),
        ('sleep_secs = "30"', "sleep_secs", "a number"),
        ("env_passthrough = [1, 2]", "env_passthrough", "a list of strings"),
        ('env_passthrough = "HOME"', "env_passthrough", "a list of strings"),
        ("description = 5", "description", "a string"),
    ],
)
def test_wrong_types(line: str, key: str, expected: str) -> None:
    e = parse_error(f"+++\n{line}\n+++\n")
    assert str(P) in e.message and f"'{key}'" in e.message and expected in e.message


def test_int_is_accepted_for_float() -> None:
    assert parse_text("+++\nsleep_secs = 5\nmax_cost_usd = 1.5\n+++\n", P).config.sleep_secs == 5


def test_bad_toml() -> None:
    e = parse_error('+++\nmodel = "unterminated\n+++\n')
    assert str(P) in e.message and "invalid TOML" in e.message


def test_duplicate_key_is_bad_toml() -> None:
    assert "invalid TOML" in parse_error("+++\nmax_iterations = 1\nmax_iterations = 2\n+++\n").message


def test_unclosed_frontmatter() -> None:
    e = parse_error('+++\nmodel = "x"\n\nInstructions\n')
    assert "not closed" in e.message and "+++" in e.hint


def test_unknown_sandbox_value_lists_choices() -> None:
    e = parse_error('+++\nsandbox = "full"\n+++\n')
    assert "'sandbox'" in e.message and "'full'" in e.message
    assert "workspace-write" in e.hint and "danger-full-access" in e.hint


@pytest.mark.parametrize("line", ["max_iterations = -1", "sleep_secs = -0.5", "max_tokens = -5"])
def test_negative_numbers(line: str) -> None:
    assert "must not be negative" in parse_error(f"+++\n{line}\n+++\n").message


@pytest.mark.parametrize("line", ["max_cost_usd = nan", "sleep_secs = inf", "max_minutes = -inf"])
def test_non_finite_numbers(line: str) -> None:
    # Bug fixed: nan passed the `< 0` check and inf made time.sleep overflow.
    assert "finite" in parse_error(f"+++\n{line}\n+++\n").message


def test_bom_and_crlf(tmp_path: Path) -> None:
    path = tmp_path / "config.md"
    path.write_bytes("\ufeff+++\r\nmax_iterations = 2\r\n+++\r\n\r\nGo.\r\n".encode())
    bf = load_bot_file(path)
    assert bf.config.max_iterations == 2 and bf.instructions == "Go."


def test_leading_blank_line_still_reads_frontmatter() -> None:
    # Bug fixed: a blank first line made the whole config silently become instructions.
    bf = parse_text("\n\n+++\nmax_iterations = 4\n+++\nGo.\n", P)
    assert bf.config.max_iterations == 4 and bf.instructions == "Go."


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "config.md"
    path.write_bytes(b"+++\ndescription = '\xff'\n+++\n")
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_bot_file(path)


def test_render_round_trip() -> None:
    values = {
        "description": 'quotes " and # hash and \\ backslash',
        "model": "scripted:/tmp/s.json",
        "max_iterations": 0,
        "sleep_secs": 1.5,
        "network": True,
        "env_passthrough": ["AWS_*", "HOME"],
        "shipped_skills": ["*"],
    }
    instructions = "# Task\n\n<!-- a comment -->\nFix it.\n\n+++\n\n# not config\nmax_iterations = 99"
    bf = parse_text(render(values, instructions), P)
    assert bf.values == values
    assert bf.instructions == instructions
    assert bf.config == BotConfig(**values)


def test_render_refuses_invalid_values() -> None:
    with pytest.raises(ConfigError, match="unknown key 'nope'"):
        render({"nope": 1}, "x")


def test_toml_comments_do_not_leak_into_values() -> None:
    bf = parse_text('+++\n# the model\nmodel = "m" # inline\n+++\nbody\n', P)
    assert bf.values == {"model": "m"}


def test_resolve_precedence() -> None:
    file_values = parse_text("+++\nmax_iterations = 3\nsleep_secs = 2\n+++\n", P).values
    c = resolve(file_values, {"max_iterations": 7, "sleep_secs": None, "model": None}, str(P))
    assert c.max_iterations == 7  # flag beats file
    assert c.sleep_secs == 2  # file beats default (the flag was not given)
    assert c.max_turn_steps == 100  # default


def test_resolve_bad_flag_names_command_line() -> None:
    with pytest.raises(ConfigError, match="command line: key 'sandbox'"):
        resolve({}, {"sandbox": "nope"}, str(P))


def test_validate_shipped_skills_type() -> None:
    with pytest.raises(ConfigError, match="shipped_skills"):
        validate({"shipped_skills": "*"}, "x")


def test_unreadable_file_is_config_error(tmp_path: Path) -> None:
    (tmp_path / "config.md").mkdir()  # a directory where the file should be: reading fails for root too
    with pytest.raises(ConfigError, match="cannot read"):
        load_bot_file(tmp_path / "config.md")
