"""A bot's config.md: `+++` TOML frontmatter validated into one typed `BotConfig`; the body is instructions.

Validation happens once, here, at the edge: unknown keys, wrong types, bad TOML and bad choices raise
`ConfigError` naming the file, the key and the fix. Precedence is defaults < config.md < CLI flags,
merged in `resolve`. The keys themselves (one field each, with a `doc`) are in `openbot.config.keys`.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union, get_args, get_origin, get_type_hints

from openbot import paths
from openbot.config import netconfig
from openbot.config.frontmatter import parse_toml, refuse_yaml_frontmatter, split_frontmatter, toml_value

# The key table lives in config/keys.py; these names stay importable from here.
from openbot.config.keys import BUILTIN_TOOLS
from openbot.config.keys import CACHE_TTLS as CACHE_TTLS
from openbot.config.keys import DEFAULT_MODEL as DEFAULT_MODEL
from openbot.config.keys import EFFORTS as EFFORTS
from openbot.config.keys import NOT_NEGATIVE as NOT_NEGATIVE
from openbot.config.keys import WEEK_SECS as WEEK_SECS
from openbot.config.keys import BotConfig as BotConfig
from openbot.config.keys import Range as Range
from openbot.config.legacy import split_legacy
from openbot.config.model_defaults import model_defaults
from openbot.config.model_names import parse_model, unknown_prefix
from openbot.config.verify import check_commands as check_verify_commands
from openbot.errors import ConfigError, UsageError


@dataclass(frozen=True)
class BotFile:
    """A parsed config.md: where it is, its typed config, the raw frontmatter values and the instructions."""

    path: Path
    config: BotConfig
    values: dict[str, object]
    instructions: str
    notices: tuple[str, ...] = ()  # legacy keys accepted but ignored (openbot.config.legacy)


def _type_ok(value: object, hint: Any) -> bool:
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        return any(_type_ok(value, a) for a in get_args(hint))
    if origin is dict or hint is dict:
        return isinstance(value, dict)
    if origin is list:
        (item,) = get_args(hint)
        return isinstance(value, list) and all(_type_ok(v, item) for v in value)
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is type(None):
        return value is None
    return isinstance(value, hint)


def _type_name(hint: Any) -> str:
    names = {str: "a string", int: "an integer", float: "a number", bool: "true or false"}
    if get_origin(hint) in (Union, types.UnionType):  # an optional key: what may be written
        return " or ".join(_type_name(a) for a in get_args(hint) if a is not type(None))
    if get_origin(hint) is dict:
        return "a table"
    if get_origin(hint) is list:
        return "a list of tables" if get_args(hint)[0] is not str else "a list of strings"
    return names.get(hint, str(hint))


def _non_finite_hint(key: str) -> str:
    """What to write instead of inf/nan: 0 where the key's doc says 0 means no limit, else its default."""
    f = next(f for f in dataclasses.fields(BotConfig) if f.name == key)
    if "0 means" in f.metadata["doc"]:
        return f"use {key} = 0 for no limit"
    return f"use a finite number, e.g. {key} = {toml_value(f.default)}"


def _check_model(model: str, source: str, key: str = "model") -> None:
    """An empty name would reach the API (or the key check) as `''`; `scripted:` alone names no file."""
    if not model.strip():
        raise ConfigError(
            f"{source}: key '{key}' is empty"
            if key == "model"
            else f"{source}: key '{key}' holds an empty name",
            hint=f'name a Claude model, e.g. model = "{DEFAULT_MODEL}"',
        )
    name, verb = parse_model(model), "is" if key == "model" else "holds"
    if bad := unknown_prefix(model):  # it would go to Anthropic's API, told to set ANTHROPIC_API_KEY
        raise ConfigError(f"{source}: key '{key}' {verb} {toml_value(model)}, {bad[0]}", hint=bad[1])
    if name.backend == "scripted" and not name.target.strip():
        raise ConfigError(
            f"{source}: key '{key}' {verb} {toml_value(model)}, which names no script file",
            hint='write "scripted:<path to a JSON script>"',
        )


def _check_thinking(value: str, source: str) -> None:
    if value in ("", "off", "adaptive") or (value.isdigit() and int(value) >= 1024):
        return
    raise ConfigError(
        f"{source}: key 'thinking' has unknown value {toml_value(value)}",
        hint='use "off", "adaptive", a budget of 1024 tokens or more (e.g. "8000"), or "" for the default',
    )


def _check_env_passthrough(entries: list[str], source: str) -> None:
    from openbot.envpolicy import NEVER, check_pattern

    for entry in entries:
        try:
            check_pattern(entry)
        except UsageError as e:
            raise ConfigError(
                f"{source}: key 'env_passthrough' has entry {toml_value(entry)}, which is not a variable "
                "name or PREFIX_* pattern",
                hint=e.hint,
            ) from e
        if entry in NEVER:
            raise ConfigError(
                f"{source}: key 'env_passthrough' lists {toml_value(entry)}, which is openbot's own model "
                "key and is never passed to the agent's commands",
                hint=f"remove {toml_value(entry)} from env_passthrough",
            )


def shipped_skill_names() -> list[str]:
    """Names `shipped_skills` may use: the `<name>.md` files and `<name>/SKILL.md` folders shipped."""
    from openbot.config.skills import skill_entries

    return sorted(name for name, _ in skill_entries(paths.SHIPPED_SKILLS))


def _check_shipped_skills(names: list[str], source: str) -> None:
    available = shipped_skill_names()
    for name in names:
        if name == "*" or name in available:
            continue
        close = difflib.get_close_matches(name, available, n=1)
        if close:
            hint = f"did you mean '{close[0]}'?"
        else:
            hint = f"shipped skills: {', '.join(available)}" if available else "no skills are shipped"
        raise ConfigError(
            f"{source}: key 'shipped_skills' names {toml_value(name)}, which is not a shipped skill",
            hint=hint,
        )


def validate(values: dict[str, Any], source: str) -> BotConfig:
    """Check every key and value against BotConfig; `source` names the file or flag in errors."""
    hints = get_type_hints(BotConfig)
    fields = {f.name: f for f in dataclasses.fields(BotConfig)}
    for key, value in values.items():
        if key not in fields:
            close = difflib.get_close_matches(key, fields, n=1)
            hint = f"did you mean '{close[0]}'?" if close else f"known keys: {', '.join(fields)}"
            raise ConfigError(f"{source}: unknown key '{key}'", hint=hint)
        if not _type_ok(value, hints[key]):
            raise ConfigError(
                f"{source}: key '{key}' must be {_type_name(hints[key])}, got {toml_value(value)}",
                hint=f"fix the value of '{key}'",
            )
        choices = fields[key].metadata["choices"]
        if choices and value not in choices:
            listed = ", ".join(c or '"" (the default)' for c in choices)
            raise ConfigError(
                f"{source}: key '{key}' has unknown value {toml_value(value)}", hint=f"use one of: {listed}"
            )
        if isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(
                f"{source}: key '{key}' must be a finite number, got {toml_value(value)}",
                hint=_non_finite_hint(key),
            )
        allowed = fields[key].metadata["range"]
        if isinstance(value, int | float) and not isinstance(value, bool) and not allowed.allows(value):
            raise ConfigError(
                f"{source}: key '{key}' must be {allowed}, got {toml_value(value)}",
                hint=f"e.g. {key} = {toml_value(fields[key].default)}",
            )
    # Checked here, not mid-run, so `bots show`, `doctor` and `run` all refuse them before anything starts.
    _check_model(values.get("model", DEFAULT_MODEL), source)
    for fallback in values.get("fallback_models", []):
        _check_model(fallback, source, "fallback_models")
    _check_env_passthrough(values.get("env_passthrough", []), source)
    _check_thinking(values.get("thinking", ""), source)
    _check_shipped_skills(values.get("shipped_skills", []), source)
    _check_tools(values.get("tools", []), source)
    check_verify_commands(values.get("verify", []), source)
    netconfig.check(values, source)
    config = BotConfig(**{**model_defaults(values), **values})  # every value has its key's type now
    _check_endpoint(config, source)
    _check_sampling(config, set(values), source)
    _check_integrations(values, source)
    return config


def _check_endpoint(config: BotConfig, source: str) -> None:
    """`base_url` is an http(s) URL; the variable `api_key_env` names is a model key, never the agent's."""
    url = config.base_url
    if url and not url.startswith(("http://", "https://")):
        raise ConfigError(
            f"{source}: key 'base_url' is {toml_value(url)}, which is not an http:// or https:// URL",
            hint='e.g. base_url = "http://localhost:11434/v1"',
        )
    var = config.api_key_env
    for entry in config.env_passthrough if var else []:
        if entry == var or (entry.endswith("*") and var.startswith(entry[:-1])):
            raise ConfigError(
                f"{source}: key 'env_passthrough' entry {toml_value(entry)} would pass {var}, the model key "
                "api_key_env names; the agent's commands never get it",
                hint=f"remove {toml_value(entry)} from env_passthrough (or list other names exactly)",
            )


def _check_tools(names: list[str], source: str) -> None:
    for name in names:
        if name not in BUILTIN_TOOLS:
            close = difflib.get_close_matches(name, BUILTIN_TOOLS, n=1)
            raise ConfigError(
                f"{source}: key 'tools' names {toml_value(name)}, which is not a built-in tool",
                hint=f"did you mean '{close[0]}'?" if close else f"the tools: {', '.join(BUILTIN_TOOLS)}",
            )


def _check_sampling(config: BotConfig, given: set[str], source: str) -> None:
    """Sampling keys only where the API takes them: the Messages API has none, the Responses API no seed."""
    model = config.model
    backend = parse_model(model).backend
    refused = {"anthropic": ("temperature", "top_p", "seed"), "openai": ("seed",)}.get(backend, ())
    for key in (k for k in refused if k in given):
        api = "Claude's Messages API" if backend == "anthropic" else "OpenAI's Responses API"
        raise ConfigError(
            f"{source}: key '{key}' does not apply to {model}: {api} takes no {key}",
            hint=f"remove '{key}' (it applies to Chat Completions servers: docs/MODELS.md, \"Sampling\")",
        )


def _check_integrations(values: dict[str, object], source: str) -> None:
    from openbot.config.mcp import parse_servers
    from openbot.config.notify import parse_targets
    from openbot.config.review import parse_review

    if review := parse_review(values.get("review", {}), source):
        _check_model(review.model, source, "review.model")
    key_var = str(values.get("api_key_env", ""))
    parse_servers(values.get("mcp_servers", {}), source, values.get("network", False) is True, key_var)
    parse_targets(values.get("notify", []), source, key_var)


def parse_text(text: str, path: Path) -> BotFile:
    fm, body = split_frontmatter(text, path)
    if fm is None:
        refuse_yaml_frontmatter(text, path)
        return BotFile(path, BotConfig(), {}, body.strip())
    values = parse_toml(fm, f"{path}: invalid TOML in the +++ frontmatter")
    values, notices = split_legacy(values, path)
    return BotFile(path, validate(values, str(path)), values, body.strip(), notices)


CONFIG_LIMIT = 256 * 1024  # bytes: a config.md (its body is prompt material) may be committed by the agent


def read_user_file(path: Path, root: Path | None = None) -> str:
    """A config.md, or a one-line ConfigError saying why not (no link out of `root`: files.read_user_text)."""
    from openbot.files import read_user_text

    return read_user_text(path, root=root or path.parent, limit=CONFIG_LIMIT, what="config file")


def load_bot_file(path: Path, root: Path | None = None) -> BotFile:
    return parse_text(read_user_file(path, root), path)


def resolve(file_values: dict[str, object], flags: dict[str, object], source: str) -> BotConfig:
    """Defaults < config.md < CLI flags (flags that are None were not given)."""
    given = {k: v for k, v in flags.items() if v is not None}
    file_values = {**netconfig.home_defaults(), **file_values}  # the user's lists, where the bot sets none
    # `--seed` suits the config's model when that is a Chat Completions server's (attempts 2.. send one)
    model = {"model": file_values["model"]} if "seed" in given and "model" in file_values else {}
    validate({**model, **given}, "command line")
    return validate({**file_values, **given}, source)


def render(values: dict[str, object], instructions: str) -> str:
    """A config.md text that `parse_text` reads back to the same values and instructions."""
    import tomlkit

    validate(values, "new config")
    doc = tomlkit.document()
    for key, value in values.items():
        doc[key] = value
    return f"+++\n{tomlkit.dumps(doc)}+++\n\n{instructions.strip()}\n"
