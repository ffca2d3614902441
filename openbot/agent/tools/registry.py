"""The one list of the agent's tools, and the one place a tool call is checked, run and reported.

Each tool's JSON schema lives in its `spec` and nowhere else; `run_tool` checks input against it (the
small subset of JSON Schema the specs use: type, required, enum, items, additionalProperties) and turns
every failure — unknown tool, bad input, ToolFailed, any exception — into an is_error result, so a tool
can never crash the turn. Tools that report themselves (the shell emits `Command`) set `reports_itself`.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from openbot.agent.models.base import ToolSpec
from openbot.agent.tools.base import Tool, ToolContext, ToolFailed, ToolOutput
from openbot.errors import OpenbotError
from openbot.events import ToolResult

_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


def default_tools(default_timeout_secs: float = 600.0, names: Collection[str] | None = None) -> list[Tool]:
    """The agent's tools: those in `names` when given, and always session_complete (it ends a run); the
    shell's description states `default_timeout_secs` (ctx.default_timeout_secs)."""
    from openbot.agent.tools.complete import SessionCompleteTool
    from openbot.agent.tools.editor import EditorTool
    from openbot.agent.tools.history_tool import SessionHistoryTool
    from openbot.agent.tools.memory_tool import MemoryTool
    from openbot.agent.tools.shell import ShellTool

    tools: list[Tool] = [
        ShellTool(default_timeout_secs, serve=True),
        EditorTool(),
        MemoryTool(),
        SessionHistoryTool(),
        SessionCompleteTool(),
    ]
    return [t for t in tools if names is None or t.spec.name in names or t.spec.name == "session_complete"]


def tool_specs(tools: list[Tool]) -> list[ToolSpec]:
    return [tool.spec for tool in tools]


def _type_ok(value: object, type_name: str) -> bool:
    if isinstance(value, bool) and type_name != "boolean":
        return False  # JSON true is not the number 1
    return isinstance(value, _TYPES.get(type_name, (object,)))


def check_input(value: object, schema: dict[str, Any], where: str = "input") -> str | None:
    """The first way `value` breaks `schema`, as one line; None when it conforms."""
    type_name = schema.get("type")
    if type_name and not _type_ok(value, type_name):
        return f"{where} must be of type {type_name}, got {type(value).__name__} {value!r:.60}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{where} must be one of {', '.join(map(repr, schema['enum']))}, got {value!r:.60}"
    if isinstance(value, dict):
        props: dict[str, Any] = schema.get("properties", {})
        missing = [k for k in schema.get("required", []) if k not in value]
        if missing:
            return f"{where} is missing required field(s): {', '.join(missing)}"
        if schema.get("additionalProperties") is False:
            unknown = sorted(set(value) - set(props))
            if unknown:
                return f"{where} has unknown field(s) {', '.join(unknown)}; allowed: {', '.join(props)}"
        for key, sub in props.items():
            if key in value and (problem := check_input(value[key], sub, key)):
                return problem
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            if problem := check_input(item, schema["items"], f"{where}[{i}]"):
                return problem
    return None


def run_tool(
    tools: list[Tool], name: str, input: dict[str, object], ctx: ToolContext, tool_use_id: str
) -> ToolOutput:
    """Run one tool call; never raises (except KeyboardInterrupt and the like)."""
    tool = next((t for t in tools if t.spec.name == name), None)
    if tool is None:
        known = ", ".join(t.spec.name for t in tools)
        out = ToolOutput(f"unknown tool {name!r}; the tools are: {known}", is_error=True)
        return _report(ctx, tool_use_id, name, out)
    problem = check_input(input, tool.spec.input_schema)
    if problem:
        return _report(ctx, tool_use_id, name, ToolOutput(f"invalid input for {name}: {problem}", True))
    try:
        out = tool.run(input, ctx, tool_use_id)
    except ToolFailed as e:
        out = ToolOutput(str(e), is_error=True)
    except OpenbotError as e:
        out = ToolOutput(e.one_line(), is_error=True)
    except Exception as e:  # a bug in a tool must not end an overnight run
        out = ToolOutput(f"{name} failed unexpectedly: {type(e).__name__}: {e}", is_error=True)
    else:
        if getattr(tool, "reports_itself", False):
            return out
    return _report(ctx, tool_use_id, name, out)


def _report(ctx: ToolContext, tool_use_id: str, name: str, out: ToolOutput) -> ToolOutput:
    ctx.sink.emit(ToolResult(tool_use_id=tool_use_id, name=name, is_error=out.is_error, content=out.content))
    return out
