"""The child-process environment allowlist."""

from __future__ import annotations

import pytest

from openbot.envpolicy import child_env, is_secret_name
from openbot.errors import UsageError

ENVIRON = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/home/u",
    "USER": "u",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "LC_CTYPE": "C.UTF-8",
    "TERM": "xterm",
    "TMPDIR": "/tmp",
    "GIT_AUTHOR_NAME": "Ada",
    "GIT_COMMITTER_EMAIL": "ada@example.com",
    "GIT_DIR": "/home/u/project/.git",
    "ANTHROPIC_API_KEY": "sk-ant-api03-secretsecretsecret",
    "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
    "GITHUB_TOKEN": "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG",
    "CARGO_HOME": "/home/u/.cargo",
    "CARGO_TARGET_DIR": "/tmp/target",
    "NPM_CONFIG_REGISTRY": "http://registry.local",
    "LD_PRELOAD": "/evil.so",
}


def test_only_allowlisted_names_pass() -> None:
    env = child_env(ENVIRON)
    assert set(env) == {
        "PATH", "HOME", "USER", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TMPDIR",
        "GIT_AUTHOR_NAME", "GIT_COMMITTER_EMAIL",
    }  # fmt: skip
    assert env["PATH"] == "/usr/bin:/bin"


def test_passthrough_names_and_prefix_patterns() -> None:
    env = child_env(ENVIRON, ["CARGO_*", "NPM_CONFIG_REGISTRY", "AWS_SECRET_ACCESS_KEY", "NOT_SET"])
    assert env["CARGO_HOME"] == "/home/u/.cargo" and env["CARGO_TARGET_DIR"] == "/tmp/target"
    assert env["NPM_CONFIG_REGISTRY"] == "http://registry.local"
    assert env["AWS_SECRET_ACCESS_KEY"].startswith("wJal")  # secret-looking, but the user asked for it
    env = child_env(ENVIRON, ["CARGO_*", "NOT_SET"])
    assert "NOT_SET" not in env and "AWS_SECRET_ACCESS_KEY" not in env and "GIT_DIR" not in env


def test_the_forge_token_is_never_passed_but_to_an_mcp_server_that_names_it() -> None:
    """Issue 37: the forge's token is the forge reader's (gate step forge.read), not the agent's."""
    for asked in (["GITHUB_TOKEN", "GH_TOKEN"], ["GITHUB_*", "GH_*"]):
        assert not {"GITHUB_TOKEN", "GH_TOKEN"} & set(child_env({**ENVIRON, "GH_TOKEN": "gho_x"}, asked))
    assert child_env(ENVIRON, ["GITHUB_TOKEN"], forge_token=True)["GITHUB_TOKEN"].startswith("ghp_")


def test_model_key_is_never_passed() -> None:
    env = child_env(ENVIRON, ["ANTHROPIC_API_KEY", "ANTHROPIC_*"])
    assert "ANTHROPIC_API_KEY" not in env
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9"


@pytest.mark.parametrize("entry", ["*", "", "FOO BAR", "A*B", "1ABC"])
def test_bad_passthrough_entries_are_rejected(entry: str) -> None:
    with pytest.raises(UsageError, match="env_passthrough"):
        child_env(ENVIRON, [entry])


def test_is_secret_name() -> None:
    for name in [
        "ANTHROPIC_API_KEY",
        "github_token",
        "DB_PASSWORD",
        "MY_SECRET",
        "GCP_CREDENTIALS",
        "NPM_AUTH",
    ]:
        assert is_secret_name(name), name
    for name in ["PATH", "HOME", "GIT_AUTHOR_NAME", "LANG", "AUTHOR"]:
        assert not is_secret_name(name), name
