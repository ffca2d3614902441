"""The tools described in the system prompt, for `tool_protocol = "text"`: no tools are sent to the API,
so the model learns each tool and the one exact format of a call here (as mini-swe-agent does)."""

from __future__ import annotations

from typing import Any

from openbot.agent.models.base import ToolSpec

FORMAT = """\
# Tools: how to call them
You act only by calling tools. To call one, write a fenced block holding one JSON object, exactly:
```json
{"name": "shell", "arguments": {"command": "ls -la"}}
```
openbot runs each call in your reply, in order, and sends you the results in the next message. A call runs
only when the reply is the call: one short line before it at most, nothing after it. Prefer one call per
reply and wait for its result. A reply without a call does nothing. When the task is done, call
`session_complete`."""


def _param(name: str, schema: dict[str, Any], required: bool) -> str:
    kind = schema.get("type", "any")
    if "enum" in schema:
        kind = " | ".join(f'"{v}"' for v in schema["enum"])
    need = ", required" if required else ""
    doc = schema.get("description", "")
    return f"  - `{name}` ({kind}{need})" + (f": {doc}" if doc else "")


def tools_prompt(specs: list[ToolSpec]) -> str:
    """The FORMAT, then each tool: its name, its description, its arguments one a line."""
    sections = [FORMAT]
    for spec in specs:
        schema = spec.input_schema
        required = set(schema.get("required", []))
        params = [_param(k, v, k in required) for k, v in schema.get("properties", {}).items()]
        sections.append(
            f"## {spec.name}\n{spec.description}\nArguments:\n" + "\n".join(params or ["  (none)"])
        )
    return "\n\n".join(sections)
