"""The `openbot` command's typer app: every command registered on it, and the one place errors become exit
codes and one-line messages. `cli/app.py` is the console entry point that hands argv here."""

from __future__ import annotations

from typing import Any

import typer
from typer._click.exceptions import UsageError
from typer.core import TyperGroup

from openbot import __version__
from openbot.cli.run_flow import said
from openbot.errors import OpenbotError, debug_enabled, exit_code_of
from openbot.views.escapes import visible


class _OpenbotGroup(TyperGroup):
    """Maps OpenbotError to its exit code and one line on stderr; a traceback only with OPENBOT_DEBUG=1."""

    def invoke(self, ctx: Any) -> object:
        args = [*getattr(ctx, "_protected_args", []), *ctx.args]  # the group's invoke consumes them
        try:
            return super().invoke(ctx)
        except UsageError as e:  # typer's own (a bad option): a --json/jsonl reader gets its summary line too
            _machine_summary(args, e.format_message(), e.exit_code)
            raise
        except OpenbotError as e:
            if not debug_enabled():
                _machine_summary(args, e.one_line(), exit_code_of(e))
            code = said(e)  # one line (a traceback only with OPENBOT_DEBUG=1)
            if code is None:
                raise
            raise typer.Exit(code) from None
        except OSError as e:  # the filesystem said no (OPENBOT_HOME is a file, a disk is full, ...)
            code = said(e)  # None: a reader that went away (`| head`): typer's main exits quietly (status 1)
            if code is None:
                raise
            raise typer.Exit(code) from None


def _machine_summary(args: list[str], message: str, code: int) -> None:
    """`run --json` / `--output json|jsonl` promise a JSON summary on stdout: a run that never started
    (usage or config error) still gives one, `status: "error"`, so a script reading stdout learns why."""
    if not args or args[0] != "run":
        return
    pairs = list(zip(args, [*args[1:], ""], strict=True))
    wanted = "--json" in args or any(
        (a in ("--output", "-o") and b in ("json", "jsonl")) or a in ("--output=json", "--output=jsonl")
        for a, b in pairs
    )
    if wanted:
        import json

        line = {
            "type": "run_summary",
            "run_id": None,
            "status": "error",
            "exit_code": code,
            "reason": message,
        }
        typer.echo(visible(json.dumps(line, ensure_ascii=False)))


app = typer.Typer(
    name="openbot",
    cls=_OpenbotGroup,
    help="Run autonomous coding bots on git repositories.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"openbot {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", "-V", callback=_version, is_eager=True, help="Show the version."
    ),
) -> None:
    """Run autonomous coding bots on git repositories."""


def get_app(command: str = "") -> typer.Typer:
    """The app with every command registered, or only `command` when it names one (command modules import
    heavy libraries only inside commands)."""
    from openbot.cli import commands

    commands.register(command)
    return app


def _hide_flag_types(command: Any) -> None:
    """A flag takes no value, so its help row shows none (typer would print `<bool>` after each); and
    arguments read the same in every usage line. Values are coerced without pydantic where they can be
    (`cli/coercion.py`)."""
    for param in getattr(command, "params", []):
        _coerce_lazily(param)
        if getattr(param, "is_flag", False) and param.metavar is None:
            param.metavar = ""
        if getattr(param, "param_type_name", "") == "argument" and param.name:
            param.metavar = param.name.upper()  # every usage line alike: BOT required, [BOT] optional
            param.get_usage_pieces = _usage(param)  # typer 0.29 writes a required one `{BOT}`
    make_help_option = command.get_help_option  # --help is made per context, not listed in params

    def help_option(ctx: object) -> object:
        option = make_help_option(ctx)
        if option is not None:
            option.metavar = ""
            _coerce_lazily(option)
        return option

    command.get_help_option = help_option
    for sub in getattr(command, "commands", {}).values():
        _hide_flag_types(sub)


def _usage(param: Any) -> Any:
    """The argument in a usage line as a reader expects it: `BOT`, `[BOT]`, `FILES...`."""

    def pieces(ctx: object) -> list[str]:
        name = param.display_name_raw
        name = name if param.required else f"[{name}]"
        return [name + ("..." if param.nargs != 1 else "")]

    return pieces


def _coerce_lazily(param: Any) -> None:
    """cli/coercion.py's coercion, where typer is the version it was written for (its private API)."""
    try:
        from openbot.cli.coercion import install
    except ImportError:  # another typer: its own coercion, pydantic and all
        return
    install(param)


OPTIONAL_VALUES = {"--resume": "last"}  # `run --resume` alone: the bot's last run


def _with_optional_values(argv: list[str]) -> list[str]:
    """Give an option that may stand alone its default value (click's parser has no optional values)."""
    out: list[str] = []
    for i, arg in enumerate(argv):
        out.append(arg)
        if arg == "--":
            return out + argv[i + 1 :]
        following = argv[i + 1] if i + 1 < len(argv) else None
        if arg in OPTIONAL_VALUES and (following is None or following.startswith("-")):
            out.append(OPTIONAL_VALUES[arg])
    return out


def build_command(name: str = "") -> Any:
    """The click command typer makes of the app, as `openbot` runs it (and scripts/render_help.py renders);
    with `name`, only that command is registered (see `run`)."""
    command = typer.main.get_command(get_app(name))
    _hide_flag_types(command)
    return command


def run(argv: list[str]) -> None:
    """Parse argv and run the command (exits, as click does). `openbot <command> …` builds only that
    command: what the group does with the others (list them) happens only without one, or in completion."""
    import os

    first = argv[0] if argv and "_OPENBOT_COMPLETE" not in os.environ else ""
    build_command(first)(args=_with_optional_values(argv))
