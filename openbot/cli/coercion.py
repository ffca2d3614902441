"""typer's coercion of option values, without importing pydantic where the answer is already known.

typer 0.29 coerces every parameter's value through a pydantic TypeAdapter, built on first use; building
the first imports pydantic (~60 ms of CPU, a third of `openbot run`'s own start-up) even for an option
left at its default. `Lazy` answers the cases whose result is plain — no value, a str for a str option, a
decimal integer or number within the option's bounds — exactly as the adapter would, and hands every
other value to typer's own coercion (so errors read the same). `install` puts it on a command tree.
"""

from __future__ import annotations

import re
from typing import Any

from typer._coercion import RuntimeParam, build_runtime_param

INTEGER = re.compile(r"0|[1-9][0-9]*")
DECIMAL = re.compile(r"(0|[1-9][0-9]*)(\.[0-9]+)?")


class Lazy(RuntimeParam):
    """typer's RuntimeParam contract (None is handled by the base class), pydantic only when needed."""

    _descriptor: Any
    _typer: RuntimeParam | None

    def __init__(self, descriptor: Any) -> None:
        super().__init__(parameter_info=descriptor.parameter_info, annotation=descriptor.annotation)
        object.__setattr__(self, "_descriptor", descriptor)  # a frozen dataclass underneath
        object.__setattr__(self, "_typer", None)

    def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
        plain = self._plain(value)
        if plain is not None:
            return plain
        typer_own = self._typer
        if typer_own is None:
            typer_own = build_runtime_param(self._descriptor)
            object.__setattr__(self, "_typer", typer_own)
        return typer_own._coerce_value(value, param=param, ctx=ctx)

    def _plain(self, value: Any) -> Any:
        """The adapter's answer where it is plain to see, else None."""
        info, kind = self.parameter_info, self.annotation
        if not isinstance(value, str) or info.parser is not None:
            return None
        if kind is str:
            return value
        if kind not in (int, float) or info.clamp:
            return None
        if not (INTEGER if kind is int else DECIMAL).fullmatch(value):
            return None
        number = kind(value)
        low_ok = info.min is None or number >= info.min
        high_ok = info.max is None or number <= info.max
        return number if low_ok and high_ok else None  # out of bounds: typer says why


def install(param: Any) -> None:
    """Give a typer parameter the lazy coercion (a file parameter keeps typer's)."""
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is None or getattr(descriptor, "file_annotation", True) is not None:
        return
    if getattr(param, "_runtime_param", "not typer 0.29's") is None:  # another typer keeps its own
        param._runtime_param = Lazy(descriptor)
