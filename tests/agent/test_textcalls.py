# ruff: noqa: E501  (model replies and call texts are kept verbatim, one line each)
"""The text-call reader on its own: every shape small models write, and what must not count as a call."""

from __future__ import annotations

from typing import Any

import pytest

from openbot.agent.textcalls import find_calls
from tests.run import qwen_replies as qwen

TOOLS = ["shell", "edit", "memory", "session_history", "session_complete"]
LS = {"command": "ls"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (qwen.CAT_FENCED, [("shell", {"command": "cat calc.py"}, "fenced")]),
        (qwen.COMMIT_BARE, [("shell", {"command": "git commit -qam 'fix add'"}, "bare")]),
        ('<tool_call>\n{"name": "shell", "arguments": {"command": "ls"}}', [("shell", LS, "tagged")]),
        ('<function=shell>{"command": "ls"}</function>', [("shell", LS, "tagged")]),
        (
            '<tool_call>\n```json\n{"name": "shell", "arguments": {"command": "ls"}}\n```\n</tool_call>',
            [("shell", LS, "tagged")],
        ),
        ('```json\n{"function": "shell", "parameters": {"command": "ls"}}\n```', [("shell", LS, "fenced")]),
        (
            '```\n{"type": "function", "function": {"name": "shell", "arguments": "{\\"command\\": \\"ls\\"}"}}\n```',
            [("shell", LS, "fenced")],
        ),
        (
            '```json\n{"tool_calls": [{"name": "shell", "arguments": {"command": "ls"}}]}\n```',
            [("shell", LS, "fenced")],
        ),
        (
            '```json\n[{"name": "shell", "arguments": {"command": "ls"}}, {"name": "shell", "arguments": {}}]\n```',
            [("shell", LS, "fenced"), ("shell", {}, "fenced")],
        ),
        (
            '```json\n{"name": "shell", "arguments": {"command": "ls"}}\n{"name": "memory", "arguments": {}}\n```',
            [("shell", LS, "fenced"), ("memory", {}, "fenced")],
        ),
        ('```json\n{"name": "shell", "arguments": {"command": "ls",},}\n```', [("shell", LS, "fenced")]),
        (
            "```json\n{'name': 'shell', 'arguments': {'command': 'ls', 'x': True}}\n```",
            [("shell", {"command": "ls", "x": True}, "fenced")],
        ),
        # raw newlines in a string, and a file that holds fences of its own
        (
            '```json\n{"name": "edit", "arguments": {"command": "create", "path": "R.md", "file_text": "a\n```sh\nls\n```\n"}}\n```',
            [("edit", {"command": "create", "path": "R.md", "file_text": "a\n```sh\nls\n```\n"}, "fenced")],
        ),
    ],
)
def test_a_call_in_any_common_shape_is_read(text: str, expected: list[tuple[str, Any, str]]) -> None:
    found = find_calls(text, TOOLS)
    assert found.problems == []
    assert [(c.name, c.input, c.form) for c in found.calls] == expected


@pytest.mark.parametrize(
    "text",
    [
        qwen.PROSE_ONLY,  # a ```python block with a dict in it is code, not a call
        'Here is package.json:\n```json\n{"name": "app", "version": "1.0"}\n```',
        'Set it to {"name": "app"} in the config.',
        "```python\nd = {'name': 'x', 'args': 1}\n```",
        "No braces at all.",
    ],
)
def test_text_that_is_not_a_call_is_left_alone(text: str) -> None:
    found = find_calls(text, TOOLS)
    assert found.calls == [] and found.problems == []


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (qwen.BROKEN, "a fenced block that looks like a tool call is not valid JSON"),
        (qwen.UNKNOWN_TOOL, "calls 'read_file', which is not a tool here (the tools: shell, edit"),
        (
            '{"name": "shell", "arguments": {"command": "ls" oops}}',
            "JSON in your text that looks like a tool",
        ),
        (
            "<tool_call>\nnot json\n</tool_call>",
            "a tool-call tag that looks like a tool call is not valid JSON",
        ),
        (
            '```json\n{"name": "shell", "arguments": ["ls"]}\n```',
            "its arguments must be a JSON object, not list",
        ),
        (
            '```json\n{"name": "shell", "arguments": "ls -la"}\n```',
            "its arguments are a string that is not a JSON",
        ),
    ],
)
def test_what_looks_like_a_call_but_cannot_be_used_is_a_problem(text: str, said: str) -> None:
    found = find_calls(text, TOOLS)
    assert found.calls == [] and said in found.problems[0]
