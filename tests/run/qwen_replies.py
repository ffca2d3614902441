# ruff: noqa: E501  (model replies and call texts are kept verbatim, one line each)
"""Replies of Qwen2.5-Coder-1.5B-Instruct (Q4_K_M, llama-server --jinja), as the model wrote them: the
tool calls are in the text (```json blocks, Hermes tags, bare JSON), never in `tool_calls`.

Captured from the real model on this machine (see docs/MODELS.md, "Small local models"); the tests serve
them through the loopback Chat Completions stand-in, so openbot reads them exactly as it read the real ones.
"""

from __future__ import annotations

# The first reply to a task: a sentence, then the call in a ```json block, pretty-printed.
CAT_FENCED = """To fix the bug in `calc.py`, I will first look at its content.

```json
{
  "name": "shell",
  "arguments": {
    "command": "cat calc.py"
  }
}
```"""

# The edit, written with Qwen's own Hermes tags (what its chat template teaches), closing tag included.
EDIT_TAGGED = """The function subtracts instead of adding. I will replace the line.

<tool_call>
{"name": "edit", "arguments": {"command": "str_replace", "path": "calc.py", "old_str": "return a - b", "new_str": "return a + b"}}
</tool_call>"""

# Bare JSON, the whole reply.
COMMIT_BARE = '{"name": "shell", "arguments": {"command": "git commit -qam \'fix add\'"}}'

# `function` / `parameters` spelling, as the model writes it after a few turns.
COMPLETE_FUNCTION = """The bug is fixed and committed.

```json
{"function": "session_complete", "parameters": {"summary": "Fixed add() in calc.py to return a + b.", "action": "review"}}
```"""

# Two calls in one reply, each in its own block.
TWO_CALLS = """I will check the file and the log.

```json
{"name": "shell", "arguments": {"command": "cat calc.py"}}
```

```json
{"name": "shell", "arguments": {"command": "git log --oneline"}}
```"""

# Prose only: the model says what it would do and stops.
PROSE_ONLY = """To fix the bug, you need to change the `-` to a `+` in the `add` function of `calc.py`:

```python
def add(a, b):
    return a + b
```

This will make the function return the sum of `a` and `b`."""

# A call the model cannot write as JSON: a missing comma between two strings.
BROKEN = """```json
{"name": "shell", "arguments": {"command": "cat" "calc.py"}}
```"""

# A tool that is not offered (the model's own idea of a tool name).
UNKNOWN_TOOL = """```json
{"name": "read_file", "arguments": {"path": "calc.py"}}
```"""
