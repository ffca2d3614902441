"""Model names, endpoints, the stored format ↔ both OpenAI protocols, prices: the pure parts."""

from __future__ import annotations

import json

import pytest

from openbot.agent.models.base import Usage
from openbot.agent.models.openai.catalog import known_window
from openbot.agent.models.openai.convert import chat_messages, parse_arguments, responses_input
from openbot.agent.models.openai.endpoint import DEFAULT_WINDOW, endpoint_for
from openbot.agent.models.pricing import cost_usd, known_price
from openbot.config.keys import BotConfig
from openbot.config.model_names import parse_model
from openbot.errors import UsageError


@pytest.mark.parametrize(
    ("name", "backend", "target", "server"),
    [
        ("claude-sonnet-5-5", "anthropic", "claude-sonnet-5-5", ""),
        ("gpt-4.1", "openai", "gpt-4.1", "openai"),
        ("o4-mini", "openai", "o4-mini", "openai"),
        ("o3", "openai", "o3", "openai"),
        ("5.3-codex", "openai", "gpt-5.3-codex", "openai"),  # the Rust openbot's spelling
        ("gpt-5.1-codex-mini", "openai", "gpt-5.1-codex-mini", "openai"),
        ("codex-mini-latest", "openai", "codex-mini-latest", "openai"),
        ("openai:gpt-5.1", "openai", "gpt-5.1", "openai"),
        ("ollama:qwen3-coder:30b", "chat", "qwen3-coder:30b", "ollama"),
        ("vllm:Qwen/Qwen3-Coder", "chat", "Qwen/Qwen3-Coder", "vllm"),
        ("openai-compatible:x", "chat", "x", "openai-compatible"),
        ("omni-model", "anthropic", "omni-model", ""),  # not an o-series name
        ("scripted:s.json", "scripted", "s.json", ""),
    ],
)
def test_names_route_at_a_glance(name: str, backend: str, target: str, server: str) -> None:
    parsed = parse_model(name)
    assert (parsed.backend, parsed.target, parsed.server) == (backend, target, server)


def test_base_url_and_key_precedence() -> None:
    env = {"OPENAI_BASE_URL": "http://proxy/v1", "OPENAI_API_KEY": "sk-x", "OTHER": "tok"}
    assert endpoint_for(parse_model("ollama:q"), BotConfig(), env).base_url == "http://localhost:11434/v1"
    assert endpoint_for(parse_model("ollama:q"), BotConfig(), env).key_var == ""  # OpenAI's key not sent
    assert endpoint_for(parse_model("openai-compatible:q"), BotConfig(), env).base_url == "http://proxy/v1"
    assert endpoint_for(parse_model("openai:gpt-5.1"), BotConfig(), env).key_var == "OPENAI_API_KEY"
    config = BotConfig(base_url="http://gpu:8000/v1/", api_key_env="OTHER")
    ep = endpoint_for(parse_model("vllm:q"), config, env)
    assert (ep.base_url, ep.key_var, ep.protocol) == ("http://gpu:8000/v1", "OTHER", "chat")
    with pytest.raises(UsageError, match="names no server"):
        endpoint_for(parse_model("openai-compatible:q"), BotConfig(), {})
    with pytest.raises(UsageError, match="OPENAI_API_KEY is not set"):
        endpoint_for(parse_model("gpt-4.1"), BotConfig(), {})
    with pytest.raises(UsageError, match="OTHER is not set"):
        endpoint_for(parse_model("vllm:q"), config, {})


CONVO = [
    {"role": "user", "content": "Fix it."},
    {
        "role": "assistant",
        "content": [
            {"type": "openai_reasoning", "item": {"type": "reasoning", "id": "rs_1", "summary": []}},
            {"type": "thinking", "thinking": "Claude's", "signature": "sig"},
            {"type": "text", "text": "Looking."},
            {"type": "tool_use", "id": "call_1", "name": "shell", "input": {"command": "ls"}},
        ],
    },
    {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "call_1", "content": [{"type": "text", "text": "a.py"}]},
            {"type": "text", "text": "[openbot] note"},
        ],
    },
]


def test_the_stored_format_in_both_protocols() -> None:
    assert responses_input(CONVO) == [
        {"role": "user", "content": "Fix it."},
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {"type": "message", "role": "assistant", "content": "Looking."},
        {"type": "function_call", "call_id": "call_1", "name": "shell", "arguments": '{"command": "ls"}'},
        {"type": "function_call_output", "call_id": "call_1", "output": "a.py"},
        {"role": "user", "content": "[openbot] note"},
    ]
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "shell", "arguments": '{"command": "ls"}'},
    }
    assert chat_messages("sys", CONVO) == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "Fix it."},
        {"role": "assistant", "content": "Looking.", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": "a.py"},  # answers first, then the note
        {"role": "user", "content": "[openbot] note"},
    ]


def test_an_error_result_is_marked_and_arguments_must_be_an_object() -> None:
    error = [
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "c", "content": "no", "is_error": True}],
        }
    ]
    assert json.dumps(responses_input(error)).count("[error] no") == 1
    assert parse_arguments('{"a": 1}') == ({"a": 1}, "")
    assert parse_arguments("")[1] == ""  # no arguments: an empty input
    assert "not a JSON object" in parse_arguments("[1]")[1]
    assert parse_arguments('{"a": ')[1]


def test_prices_and_windows() -> None:
    usage = Usage(input_tokens=1_000_000, output_tokens=1_000_000, cache_read_tokens=1_000_000)
    assert cost_usd("openai:gpt-5.1", usage) == pytest.approx(1.25 + 10.0 + 0.125)
    assert cost_usd("gpt-4.1", usage) == pytest.approx(2.0 + 8.0 + 0.5)
    assert cost_usd("ollama:qwen3-coder", usage) == 0.0  # priced by the backend from the config
    assert known_price("ollama:anything") and not known_price("openai:gpt-99")
    assert known_window("gpt-4.1-mini") == (1_047_576, 32_768) and known_window("llama3") is None
    assert DEFAULT_WINDOW == 32_768
