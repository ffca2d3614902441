"""Write openbot/cli/help.json: every help text typer prints plainly (80 columns, no colour), for the
console entry point to print without importing typer (openbot/cli/stored_help.py).

    python scripts/render_help.py           # rewrite the file
    python scripts/render_help.py --check   # exit 1, naming the stale texts, when it is out of date

Run it after changing a command, an option or a help string (tests/cli/test_stored_help.py fails until
then). Typer renders here exactly as in `openbot --help | cat`: COLUMNS=80 pins the width rich would
otherwise take from a terminal on stdin, and every other variable typer or rich read is removed.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from openbot.cli import stored_help  # noqa: E402


def _invocations(command: Any, path: list[str]) -> list[list[str]]:
    """Every `[path] --help|-h`, and the bare path of a group that prints its help (no_args_is_help)."""
    found = [[*path, flag] for flag in stored_help.HELP_ARGS]
    if getattr(command, "no_args_is_help", False) and hasattr(command, "commands"):
        found.append(path)
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        found.extend(_invocations(sub, [*path, name]))
    return found


def render() -> dict[str, Any]:
    """{"argv": {joined argv: [exit code, text index]}, "texts": [...]}, rendered by typer in this process."""
    for name in stored_help.RENDERING_ENV:
        os.environ.pop(name, None)
    os.environ["COLUMNS"] = str(stored_help.WIDTH)
    from openbot.cli.typer_app import build_command  # typer reads its settings from the cleaned env

    command = build_command()
    texts: list[str] = []
    argv_map: dict[str, list[int]] = {}
    for argv in _invocations(command, []):
        out, err = io.StringIO(), io.StringIO()
        code: Any = 0
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                command.main(args=argv, prog_name="openbot")
            except SystemExit as e:
                code = e.code or 0
        if err.getvalue() or not isinstance(code, int):
            continue  # not plain help: typer answers it at run time
        text = out.getvalue()
        if text not in texts:
            texts.append(text)
        argv_map[" ".join(argv)] = [code, texts.index(text)]
    return {"argv": argv_map, "texts": texts}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the file is out of date")
    parser.add_argument(
        "--file", default=stored_help.HELP_FILE, help="the stored file (default: %(default)s)"
    )
    args = parser.parse_args()
    rendered = render()
    path = Path(args.file)
    if args.check:
        stored = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {"argv": {}, "texts": []}

        def page(data: dict[str, Any], key: str) -> tuple[int, str] | None:
            found = data["argv"].get(key)
            return None if found is None else (found[0], data["texts"][found[1]])

        stale = [
            k for k in sorted({*rendered["argv"], *stored["argv"]}) if page(rendered, k) != page(stored, k)
        ]
        if stale:
            names = ", ".join(f"'openbot {k}'".replace(" '", "'") for k in stale)
            print(f"{path.name} is stale for {names}: run python scripts/render_help.py", file=sys.stderr)
            return 1
        return 0
    path.write_text(json.dumps(rendered, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {path} ({len(rendered['argv'])} invocations, {len(rendered['texts'])} texts)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
