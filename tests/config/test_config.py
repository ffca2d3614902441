"""config.md parsing: defaults, validation errors that name file and key, render round trip, precedence."""

from __future__ import annotations

from pathlib import Path

import pytest

from openbot.config.botconfig import (
    DEFAULT_MODEL,
    BotConfig,
    load_bot_file,
    parse_text,
    render,
    resolve,
    validate,
)
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
    assert "'sandbox'" in e.message and 'value "full"' in e.message
    assert "workspace-write" in e.hint and "danger-full-access" in e.hint


@pytest.mark.parametrize(
    ("line", "allowed"),
    [
        ("max_iterations = -1", "must be 0 or more, got -1"),
        ("sleep_secs = -0.5", "must be 0 or more, up to 604800, got -0.5"),
        ("max_tokens = -5", "must be 0 or more, got -5"),
        # Bug fixed: these passed validation and broke every run (every command timed out at once, every
        # turn ended after one call or was "stuck" at its first call).
        ("command_timeout_secs = 0", "must be more than 0, up to 604800, got 0"),
        ("max_turn_steps = 0", "must be 1 or more, got 0"),
        ("max_repeats = 0", "must be 2 or more, got 0"),
        ("max_repeats = 1", "must be 2 or more, got 1"),
        # Bug fixed: time.sleep overflowed (a traceback between iterations) on a huge pause.
        ("sleep_secs = 1e10", "must be 0 or more, up to 604800, got 10000000000.0"),
    ],
)
def test_numbers_outside_their_range(line: str, allowed: str) -> None:
    key = line.split(" =")[0]
    e = parse_error(f"+++\n{line}\n+++\n")
    assert e.message == f"{P}: key '{key}' {allowed}"
    assert e.hint.startswith(f"e.g. {key} = ")


@pytest.mark.parametrize(
    "line", ["max_turn_steps = 1", "max_repeats = 2", "command_timeout_secs = 0.5", "sleep_secs = 604800"]
)
def test_numbers_at_the_edge_of_their_range(line: str) -> None:
    parse_text(f"+++\n{line}\n+++\n", P)


def test_every_default_is_in_its_own_range() -> None:
    import dataclasses

    for f in dataclasses.fields(BotConfig):
        if isinstance(f.default, int | float) and not isinstance(f.default, bool):
            assert f.metadata["range"].allows(f.default), f.name


@pytest.mark.parametrize("name", ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"])
def test_env_passthrough_refuses_the_model_key(name: str) -> None:
    # Bug fixed: accepted, then silently never passed to the agent's commands.
    e = parse_error(f'+++\nenv_passthrough = ["HOME", "{name}"]\n+++\n')
    assert e.message == (
        f"{P}: key 'env_passthrough' lists \"{name}\", which is openbot's own model key and is never "
        "passed to the agent's commands"
    )


@pytest.mark.parametrize("value", ['""', '"   "'])
def test_empty_model_is_refused(value: str) -> None:
    # Bug fixed: reported as "ANTHROPIC_API_KEY is not set (needed by model '')".
    e = parse_error(f"+++\nmodel = {value}\n+++\n")
    assert e.message == f"{P}: key 'model' is empty" and DEFAULT_MODEL in e.hint


def test_scripted_model_without_a_path_is_refused() -> None:
    e = parse_error('+++\nmodel = "scripted:"\n+++\n')
    assert "names no script file" in e.message


@pytest.mark.parametrize(
    ("line", "hint"),
    [
        ("max_cost_usd = nan", "max_cost_usd = 0 for no limit"),
        ("max_minutes = -inf", "max_minutes = 0 for no limit"),
        # Bug fixed: "use 0 for no limit" was offered for keys where 0 means something else.
        ("sleep_secs = inf", "e.g. sleep_secs = 30"),
        ("command_timeout_secs = inf", "e.g. command_timeout_secs = 600"),
    ],
)
def test_non_finite_numbers(line: str, hint: str) -> None:
    # Bug fixed: nan passed the `< 0` check and inf made time.sleep overflow.
    e = parse_error(f"+++\n{line}\n+++\n")
    assert "finite" in e.message and hint in e.hint


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        ("max_iterations = true", "got true"),
        ('max_iterations = "3"', 'got "3"'),
        ("max_iterations = 1.5", "got 1.5"),
        ('network = "yes"', 'got "yes"'),
        ("env_passthrough = [1]", "got [1]"),
    ],
)
def test_values_in_errors_are_spelled_as_toml(line: str, shown: str) -> None:
    # Bug fixed: a TOML boolean was reported as Python's `True`.
    message = parse_error(f"+++\n{line}\n+++\n").message
    assert message.endswith(shown) and "True" not in message


@pytest.mark.parametrize("entry", ["*", "FOO BAR", "1X", "A-B_*"])
def test_bad_env_passthrough_entries_are_config_errors(entry: str) -> None:
    # Bug fixed: caught only when the first command ran, mid-run.
    e = parse_error(f'+++\nenv_passthrough = ["HOME", "{entry}"]\n+++\n')
    assert str(P) in e.message and "'env_passthrough'" in e.message and f'"{entry}"' in e.message
    assert "PREFIX" in e.message and "CARGO_*" in e.hint


def test_good_env_passthrough_entries() -> None:
    c = parse_text('+++\nenv_passthrough = ["NPM_CONFIG_REGISTRY", "CARGO_*"]\n+++\n', P).config
    assert c.env_passthrough == ["NPM_CONFIG_REGISTRY", "CARGO_*"]


@pytest.fixture
def shipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    from openbot import paths

    root = tmp_path / "shipped"
    (root / "folder-skill").mkdir(parents=True)
    (root / "folder-skill" / "SKILL.md").write_text("Folder.\n")
    (root / "writing-tests.md").write_text("Tests.\n")
    (root / "README.md").write_text("Not a skill.\n")
    monkeypatch.setattr(paths, "SHIPPED_SKILLS", root)
    return root


def test_shipped_skills_are_checked_against_the_shipped_files(shipped: Path) -> None:
    ok = parse_text('+++\nshipped_skills = ["writing-tests", "folder-skill"]\n+++\n', P).config
    assert ok.shipped_skills == ["writing-tests", "folder-skill"]
    assert parse_text('+++\nshipped_skills = ["*"]\n+++\n', P).config.shipped_skills == ["*"]
    # Bug fixed: an unknown name was only caught when the run loaded its skills.
    e = parse_error('+++\nshipped_skills = ["writing-test"]\n+++\n')
    assert str(P) in e.message and "'shipped_skills'" in e.message and '"writing-test"' in e.message
    assert e.hint == "did you mean 'writing-tests'?"
    e = parse_error('+++\nshipped_skills = ["README"]\n+++\n')
    assert "folder-skill, writing-tests" in e.hint


def test_real_shipped_skill_names_are_accepted() -> None:
    from openbot.config.botconfig import shipped_skill_names

    assert {"git-hygiene", "writing-tests"} <= set(shipped_skill_names())


@pytest.mark.parametrize(
    ("text", "first_line"),
    [
        ("---\nmodel: claude-x\nmax_iterations: 3\n---\nFix bugs.\n", 'model = "claude-x"'),
        ("\ufeff\n---\nsleep_secs: 5\n---\n", "sleep_secs = 5"),
        ("---\ndescription:\n---\nGo.\n", 'description = "..."'),
    ],
)
def test_yaml_frontmatter_is_refused(text: str, first_line: str) -> None:
    # Bug fixed: the YAML block (skills use ---) was silently taken as instructions.
    e = parse_error(text)
    assert str(P) in e.message and "TOML between +++ lines, not YAML between ---" in e.message
    assert first_line in e.hint and "+++" in e.hint


@pytest.mark.parametrize(
    "text",
    [
        "---\nJust a rule above some prose.\n---\nMore.\n",
        "---\n\n# Heading\n",
        "Intro\n---\nmodel: x\n---\n",
        "---\n- a list\n- item\n---\n",
    ],
)
def test_markdown_rules_in_instructions_are_not_yaml(text: str) -> None:
    assert parse_text(text, P).instructions == text.strip()


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


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ({"model": ""}, "command line: key 'model' is empty"),
        ({"max_turn_steps": 0}, "command line: key 'max_turn_steps' must be 1 or more, got 0"),
        (
            {"sleep_secs": 1e9},
            "command line: key 'sleep_secs' must be 0 or more, up to 604800, got 1000000000.0",
        ),
    ],
)
def test_flags_get_the_same_checks_as_the_file(flags: dict, message: str) -> None:
    with pytest.raises(ConfigError) as e:
        resolve({"model": "scripted:x.json"}, flags, str(P))
    assert e.value.message == message


def test_run_flags_are_checked_before_anything_starts(cli, repo: Path) -> None:
    from tests.helpers import complete, make_bot, reply

    bot_dir = make_bot("flags", [reply("", complete())])
    out = cli("run", "flags", "--model", "", cwd=repo)
    assert out.exit_code == 2 and "command line: key 'model' is empty" in out.output
    out = cli("run", "flags", "--sleep-secs", "1e12", cwd=repo)
    assert out.exit_code == 2 and "key 'sleep_secs' must be 0 or more, up to 604800" in out.output
    assert not (bot_dir / "workspaces").exists()


def test_validate_shipped_skills_type() -> None:
    with pytest.raises(ConfigError, match="shipped_skills"):
        validate({"shipped_skills": "*"}, "x")


def test_unreadable_file_is_config_error(tmp_path: Path) -> None:
    (tmp_path / "config.md").mkdir()  # a directory where the file should be: reading fails for root too
    with pytest.raises(ConfigError, match="it is a directory, not a regular file"):
        load_bot_file(tmp_path / "config.md")


@pytest.mark.parametrize(
    "line", ['env_passthrough = ["*"]', 'shipped_skills = ["nonexistent"]', "max_repeats = 1"]
)
def test_run_refuses_bad_values_before_creating_anything(repo: Path, line: str) -> None:
    from tests.helpers import complete, git, make_bot, reply, run_cli

    bot_dir = make_bot("early", [reply("", complete())], config=line)
    out = run_cli("run", "early", cwd=repo)
    assert out.returncode == 2 and str(bot_dir / "config.md") in out.stderr
    assert line.split(" =")[0] in out.stderr
    assert git(repo, "branch", "--list", "openbot/*") == "" and not (bot_dir / "workspaces").exists()
