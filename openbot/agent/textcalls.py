"""Tool calls a model wrote as text: found, checked against the offered tools, or said to be unusable.

Small local models often write their calls in the reply's text instead of the API's tool-call field
(Qwen2.5-Coder-1.5B on llama-server does so in nearly every reply, `--jinja` or not). `find_calls`
reads every shape they commonly use, in this order, each span read once:

    <tool_call>{...}</tool_call>          Hermes / Qwen tags (a missing closing tag at the end is fine);
    <function=NAME>{...}</function>       also <function_call>, <tool_use>
    ```json {...} ```                     fenced blocks (any language tag) holding an object or a list
    {...}                                 bare JSON anywhere in the prose

and in each the call shapes `{"name", "arguments" | "parameters" | "input" | "args"}`,
`{"function": NAME | {"name", "arguments"}}`, `{"tool" | "tool_name", …}`, `{"tool_calls": [...]}`, lists
of those, arguments as an object or as a JSON string. JSON as small models write it is accepted: raw
newlines in strings, trailing commas, Python literals (True, None, single quotes). What looks like a
call but cannot be read (a tag or fence that is not JSON, a call naming a tool not offered, arguments
that are not an object) is a `problem`: the turn runs nothing of that reply and tells the model why.
Backend-agnostic: only the reply's text and the offered tool names go in. Where each call stands in the
text (`spans`) is kept: whether a reply *is* its calls, and so whether they run, is agent/textreply.py's.
"""

from __future__ import annotations

import ast
import io
import json
import re
import tokenize
from collections.abc import Collection
from dataclasses import dataclass, field

Form = str  # "tagged" | "fenced" | "bare"

_TAG = re.compile(
    r"<(tool_call|function_call|tool_use)>\s*(.*?)\s*(?:</\1>|$)|<function=([\w.-]+)>\s*(.*?)\s*(?:</function>|$)",
    re.DOTALL,
)
_FENCE = re.compile(r"```[ \t]*([\w+.-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
_CALLISH = re.compile(r'\{\s*["\']?(name|function|tool|tool_name|tool_calls)["\']?\s*:')
_NAME_KEYS = ("name", "function", "tool", "tool_name")
_ARG_KEYS = ("arguments", "parameters", "input", "args", "tool_input")
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_DECODER = json.JSONDecoder(strict=False)  # small models put raw newlines inside strings


@dataclass(frozen=True)
class TextCall:
    name: str
    input: dict[str, object]
    form: Form


@dataclass
class Found:
    """The calls found in a reply's text, and what looked like a call but could not be used."""

    calls: list[TextCall] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    spans: list[tuple[int, int]] = field(default_factory=list)  # where in the text the calls are

    @property
    def forms(self) -> list[str]:
        return sorted({c.form for c in self.calls})


def find_calls(text: str, tools: Collection[str]) -> Found:
    found = Found()
    taken: list[tuple[int, int]] = []
    for m in _TAG.finditer(text):
        taken.append(m.span())
        if m.group(3):  # <function=NAME>{arguments}</function>
            body = _unfence(m.group(4))
            value, error = load(body) if body else ({}, "")
            value = {"name": m.group(3), "arguments": value}
        else:
            value, error = load(_unfence(m.group(2)))
        _add(found, value, tools, "tagged", error, strong=True, span=m.span())
    pos = 0
    while f := _FENCE.search(text, pos):
        pos = f.end()
        if _inside(f.start(), taken):
            continue
        body = f.group(2).strip()
        span = f.span()
        if body.startswith(("{", "[")):
            value, error, span = _fenced(text, f)
            _add(found, value, tools, "fenced", error, strong=bool(_CALLISH.search(body)), span=span)
            pos = span[1]
        taken.append(span)  # any fence: code in a ```python block is not a call
    _bare(text, taken, found, tools)
    return found


def _fenced(text: str, m: re.Match[str]) -> tuple[object, str, tuple[int, int]]:
    """A fence's JSON; read past the first closing ``` when the JSON goes on (a file's text may hold
    fences of its own), so the fence ends where the JSON does."""
    start = m.start(2) + len(m.group(2)) - len(m.group(2).lstrip())
    try:
        value, end = _DECODER.raw_decode(text, start)
    except json.JSONDecodeError:
        value, error = load(m.group(2).strip())
        return value, error, m.span()
    close = re.compile(r"\s*(```|\Z)").match(text, end)
    if close is None:
        value, error = load(m.group(2).strip())
        return value, error, m.span()
    return value, "", (m.start(), close.end())


def _bare(text: str, taken: list[tuple[int, int]], found: Found, tools: Collection[str]) -> None:
    """JSON objects in the prose: only call-shaped ones count; a call-shaped start that is not JSON is a
    problem (an example object in the prose is not)."""
    i = text.find("{")
    while i != -1:
        if _inside(i, taken):
            i = text.find("{", i + 1)
            continue
        value, end, error = _decode_at(text, i)
        if end:
            _add(found, value, tools, "bare", "", strong=False, span=(i, end))
            i = text.find("{", end)
            continue
        if _CALLISH.match(text, i):
            _add(found, None, tools, "bare", error, strong=True, span=(i, i))
            return  # the rest of the text cannot be read reliably after a broken object
        i = text.find("{", i + 1)


def _decode_at(text: str, i: int) -> tuple[object, int, str]:
    try:
        value, end = _DECODER.raw_decode(text, i)
        return value, end, ""
    except json.JSONDecodeError as e:
        return None, 0, f"{e.msg} (line {e.lineno - text.count(chr(10), 0, i)} column {e.colno})"


def _inside(pos: int, spans: list[tuple[int, int]]) -> bool:
    return any(a <= pos < b for a, b in spans)


def _unfence(body: str) -> str:
    m = _FENCE.search(body)
    return m.group(2).strip() if m else body.strip()


def load(body: str) -> tuple[object, str]:
    """`body` as JSON the way small models write it: strict JSON, then without trailing commas, then
    several objects in a row (one per line), then Python literals. The value, or None and why not."""
    try:
        return _DECODER.decode(body), ""
    except json.JSONDecodeError as e:
        error = f"{e.msg} (line {e.lineno} column {e.colno})"
    try:
        return _DECODER.decode(_TRAILING_COMMA.sub(r"\1", body)), ""
    except json.JSONDecodeError:
        pass
    several = _several(body)
    if several:
        return several, ""
    try:
        if not _adjacent_strings(body):
            return ast.literal_eval(body), ""
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError, tokenize.TokenError):
        pass
    return None, error


def _adjacent_strings(body: str) -> bool:
    """Python joins `"ls" "-la"` into one string; in JSON it is a missing comma, not a command."""
    kinds = [t.type for t in tokenize.generate_tokens(io.StringIO(body).readline) if t.type != tokenize.NL]
    return any(a == b == tokenize.STRING for a, b in zip(kinds, kinds[1:], strict=False))


def _several(body: str) -> list[object]:
    values, i = [], 0
    while i < len(body):
        while i < len(body) and body[i] in " \t\r\n,":
            i += 1
        if i == len(body):
            break
        try:
            value, i = _DECODER.raw_decode(body, i)
        except json.JSONDecodeError:
            return []
        values.append(value)
    return values if len(values) > 1 else []


def _add(
    found: Found,
    value: object,
    tools: Collection[str],
    form: Form,
    error: str,
    *,
    strong: bool,
    span: tuple[int, int],
) -> None:
    """Add the calls in `value`, read from `span` of the text. `strong`: the span says it is a call (a
    tag, or call-shaped text), so anything unreadable in it is a problem; otherwise what is not
    call-shaped is just text."""
    before = len(found.calls)
    _add_calls(found, value, tools, form, error, strong)
    if len(found.calls) > before:
        found.spans.append(span)


def _add_calls(
    found: Found, value: object, tools: Collection[str], form: Form, error: str, strong: bool
) -> None:
    where = {"tagged": "a tool-call tag", "fenced": "a fenced block", "bare": "JSON in your text"}[form]
    if value is None:
        if strong:
            found.problems.append(f"{where} that looks like a tool call is not valid JSON: {error}")
        return
    for item in _items(value):
        name, args, shaped = _shape(item)
        if not shaped or not isinstance(name, str):
            if strong and form == "tagged":
                found.problems.append(
                    f'{where} holds no call: expected {{"name": ..., "arguments": {{...}}}}'
                )
            continue
        if name not in tools:
            if strong or args is not None:
                known = ", ".join(tools)
                found.problems.append(
                    f"{where} calls {name!r}, which is not a tool here (the tools: {known})"
                )
            continue
        parsed, problem = _arguments(args)
        if problem:
            found.problems.append(f"{where} calling {name}: {problem}")
        else:
            found.calls.append(TextCall(name, parsed, form))


def _items(value: object) -> list[object]:
    if isinstance(value, dict) and isinstance(value.get("tool_calls"), list):
        return list(value["tool_calls"])
    return list(value) if isinstance(value, list) else [value]


def _shape(item: object) -> tuple[object, object, bool]:
    """(name, arguments, call-shaped?) of one object; arguments None when it has none."""
    if not isinstance(item, dict):
        return None, None, False
    inner = item.get("function")
    if isinstance(inner, dict):  # OpenAI's own shape: {"type": "function", "function": {...}}
        item = inner
    name = next((item[k] for k in _NAME_KEYS if isinstance(item.get(k), str)), None)
    args = next((item[k] for k in _ARG_KEYS if k in item), None)
    # An object with a name and nothing else that could be arguments is a call only when its other keys
    # are few (`{"name": "shell"}`), not any JSON that has a "name" (a package.json).
    shaped = name is not None and (args is not None or set(item) <= {"name", "type", "id", "function"})
    return name, args, shaped


def _arguments(args: object) -> tuple[dict[str, object], str]:
    if args is None:
        return {}, ""
    if isinstance(args, str):
        value, error = load(args) if args.strip() else ({}, "")
        if error or not isinstance(value, dict):
            return (
                {},
                f"its arguments are a string that is not a JSON object ({error or type(value).__name__})",
            )
        args = value
    if not isinstance(args, dict):
        return {}, f"its arguments must be a JSON object, not {type(args).__name__}"
    return args, ""
