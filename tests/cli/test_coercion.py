"""cli/coercion.py gives every option of every command the value typer's own (pydantic) coercion gives,
or the same error, for values a user types; and it leaves pydantic unimported for the plain ones."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer._click import Context
from typer._coercion import build_runtime_param

from openbot.cli.coercion import Lazy
from openbot.cli.typer_app import build_command

ROOT = Path(__file__).resolve().parents[2]
VALUES = [None, "", "0", "7", "10", "-1", "007", "+3", " 5", "1.5", "0.25", "1e3", "1_000", "abc", "x y", "é"]


def _params(command: Any, path: str = "openbot") -> list[tuple[str, Any, Any]]:
    found = [(f"{path} {p.name}", command, p) for p in command.params if hasattr(p, "type_descriptor")]
    for name, sub in getattr(command, "commands", {}).items():
        found += _params(sub, f"{path} {name}")
    return found


def _outcome(runtime: Any, value: Any, param: Any, ctx: Context) -> tuple[str, Any]:
    try:
        got = runtime.coerce(value, param=param, ctx=ctx)
        return "value", (type(got).__name__, got)
    except Exception as e:  # noqa: BLE001 (the error itself is what is compared)
        return "error", (type(e).__name__, e.format_message() if hasattr(e, "format_message") else str(e))


PARAMS = [p for p in _params(build_command()) if p[2].type_descriptor.file_annotation is None]


@pytest.mark.parametrize(("name", "command", "param"), PARAMS, ids=[p[0] for p in PARAMS])
def test_every_option_coerces_as_typer_does(name: str, command: Any, param: Any) -> None:
    ctx = Context(command)
    lazy, own = Lazy(param.type_descriptor), build_runtime_param(param.type_descriptor)
    for value in VALUES:
        assert _outcome(lazy, value, param, ctx) == _outcome(own, value, param, ctx), (name, value)


def test_plain_values_leave_pydantic_unimported() -> None:
    code = (
        "import sys\n"
        "from typer._click import Context\n"
        "from openbot.cli.typer_app import build_command\n"
        "run = build_command().commands['run']\n"
        "ctx = Context(run)\n"
        "values = {'prompt': 'go', 'max_iterations': '3', 'sleep_secs': '0.5', 'model': None}\n"
        "for p in run.params:\n"
        "    if p.name in values:\n"
        "        p.process_value(ctx, values[p.name])\n"
        "print('pydantic' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": str(ROOT)},
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
