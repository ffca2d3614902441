# ruff: noqa: E501  (model replies and call texts are kept verbatim, one line each)
"""Replies shaped as Qwen2.5-Coder-1.5B-Instruct's (Q4_K_M, llama-server --jinja): the tool calls are in the
text (```json blocks, Hermes tags, bare JSON), never in `tool_calls`.

The model's real replies, verbatim with their raw SSE streams, are in qwen_capture.json (captured on this
machine through a recording proxy; test_text_calls.py replays them). There it wrote a prose reply first
("### Summary\nI will carry on with the instructions provided in the task."), then one compact ```json
block per reply and nothing else, looping on `git status`. The replies below keep that shape and add
the other forms small models use (Hermes tags as Qwen's template teaches, bare JSON, function/parameters),
so every path of the reader is exercised with a task that can finish.
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
