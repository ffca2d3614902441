"""`openbot history <bot>`: a bot's sessions in one project, newest first, or one session in full.

Reads only what it shows (the last N metadata files, or one events.jsonl) so it stays fast with
thousands of sessions. Imports stay light: no rich, no anthropic, no pygit2.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from openbot.cli.completion import bot_names
from openbot.cli.typer_app import app
from openbot.views.escapes import shorten, visible, visible_json
from openbot.views.fields import feedback_lines, money

if TYPE_CHECKING:
    from openbot.state.history import SessionMeta


def _echo(text: str) -> None:
    """Every line this command prints holds agent-written text (summaries, messages, command output)."""
    typer.echo(visible(text))


def _tokens(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)


def _duration(secs: float) -> str:
    s = int(secs)
    if s < 60:
        return f"{secs:.0f}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def _row(m: SessionMeta) -> str:
    from openbot.state.history import UNKNOWN

    date = m.started_at[:16].replace("T", " ") or "-"
    summary = m.response_summary or m.prompt_summary or m.error
    if m.status == UNKNOWN and m.error:
        summary = "damaged: see below"
    checked = m.extra.get("verification")
    tag = ""
    if isinstance(checked, dict) and isinstance(checked.get("passed"), bool):
        tag = "verified" if checked["passed"] else "NOT verified"
    if m.extra.get("nothing_changed") is True:  # no work to check: said instead of "nothing checked"
        tag = "nothing changed in the repository" + (f"; {tag}" if tag else "")
    elif not tag and m.status == "completed" and m.action:  # it called session_complete, nothing checked
        tag = "not verified: nothing checked the work"
    summary = f"[{tag}] {summary}" if tag else summary
    return (
        f"{m.session_number:>5}  {m.run_id or '-':<21}  {date:<16}  "
        f"{_duration(m.duration_secs):>7}  {_tokens(m.total_tokens):>7}  "
        f"{m.status:<11}  {m.action or '-':<7}  {shorten(summary, 70)}"
    )


def _print_list(sessions: list[SessionMeta]) -> None:
    from openbot.state.history import UNKNOWN

    _echo(
        f"{'#':>5}  {'run (--resume <run>)':<21}  "
        f"{'started (UTC)':<16}  {'time':>7}  {'tokens':>7}  {'status':<11}  {'action':<7}  summary"
    )
    for m in sessions:
        _echo(_row(m))
    for m in sessions:  # in full, under the table: the file to restore or delete must not be cut
        if m.status == UNKNOWN and m.error:
            _echo(f"session {m.session_number}: {m.error}")


def _budget(b: dict[str, Any]) -> str:
    """`$0.12 of $5.00, 12,345 tokens, 3.2 min` from `Budget.status()`."""
    cost = money(b.get("cost_usd") or 0, b.get("cost_known") is not False, places=2)
    cost += f" of ${b['max_cost_usd']:.2f}" if b.get("max_cost_usd") else ""
    tokens = f"{b.get('tokens') or 0:,} tokens" + (f" of {b['max_tokens']:,}" if b.get("max_tokens") else "")
    minutes = f"{b.get('minutes') or 0:.1f} min" + (
        f" of {b['max_minutes']:g}" if b.get("max_minutes") else ""
    )
    return f"{cost}, {tokens}, {minutes}"


def _sandbox(s: dict[str, object]) -> str:
    """`workspace-write (enforced)`, or what it ran as when the kernel could not enforce the request."""
    requested, enforced = s.get("requested", ""), s.get("enforced", "")
    if requested and requested != enforced:
        return f"{enforced} (requested {requested}: {s.get('warning') or 'not enforceable here'})"
    return f"{enforced} ({'no confinement' if enforced == 'danger-full-access' else 'enforced'})"


def _verification(v: dict[str, object]) -> str:
    """`passed at <sha> (attempt 2 of 3)` or `failed at <sha> (attempt 1 of 3): <reason>`."""
    verdict = "passed" if v.get("passed") is True else "failed"
    text = f"{verdict} at {str(v.get('sha') or '?')[:12]} (attempt {v.get('attempt')} of {v.get('attempts')})"
    text += f": {v['reason']}" if v.get("reason") else ""
    return text + "".join(f"\n  {line}" for line in str(v.get("tail") or "").splitlines())


def _field(key: str, value: object) -> str:
    """A metadata value as readable text; nested values of unexpected shape fall back to compact JSON."""
    try:
        if key == "budget" and isinstance(value, dict):
            return _budget(value)
        if key == "sandbox" and isinstance(value, dict):
            return _sandbox(value)
        if key == "verification" and isinstance(value, dict):
            return _verification(value)
        if key == "feedback" and isinstance(value, dict):  # --feedback (run/feedback.py)
            return "\n  ".join(feedback_lines(value))
    except (TypeError, ValueError):  # hand-edited metadata: show it as it is
        pass
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _print_session(m: SessionMeta, events: list[dict[str, object]]) -> None:
    from openbot.views.transcript import entries
    from openbot.views.transcript_text import person_text

    _echo(f"session {m.session_number} ({m.session_id})")
    fields = m.to_dict()
    fields["tokens"] = ", ".join(f"{k} {v:,}" for k, v in m.tokens.items()) + f" (total {m.total_tokens:,})"
    for key, value in fields.items():
        if key not in ("session_id", "session_number") and value not in ("", None, {}):
            # Continuation lines of a multi-line value stay in the value column.
            _echo(f"  {key + ':':<18}" + _field(key, value).strip().replace("\n", "\n" + " " * 20))
    _echo("")
    _echo(person_text(entries(events)))


@app.command()
def history(
    bot: str = typer.Argument(..., help="The bot whose sessions to show.", autocompletion=bot_names),
    project: str | None = typer.Option(
        None, "--project", help="Project slug (a directory under workspaces/); default: this repository."
    ),
    session: str | None = typer.Option(
        None, "--session", help="Show one session in full: its id or its number."
    ),
    limit: int = typer.Option(20, "-n", "-l", "--limit", min=1, help="How many recent sessions to list."),
    as_json: bool = typer.Option(
        False, "--json", help="Print JSON: a list of metadata, or {metadata, events}."
    ),
    export: str | None = typer.Option(
        None, "--export", help="Write one session (--session, default the latest) as a page: 'html'."
    ),
    output: Path | None = typer.Option(
        None,
        "--output",
        "-o",
        help="Where --export writes (default: transcript.html in the session's own directory).",
    ),
) -> None:
    """List a bot's sessions in this project, newest first, or show one session's commands and messages."""
    # Imported here so `openbot --help` pays only for typer.
    from openbot import paths
    from openbot.config.bots import find_bot
    from openbot.state.history import History
    from openbot.state.project import resolve_project

    cwd = Path.cwd()
    proj = resolve_project(cwd, project)
    find_bot(bot, proj.repo.workdir if proj.repo else None)
    from openbot.cli.memory_cmd import project_slug

    slug = project_slug(bot, proj)
    store = History(paths.history_dir(bot, slug))
    if export is not None:
        _export(store, bot, session, export, output)
        return
    if session is not None:
        meta = store.get(session)
        events = list(store.events(meta.session_id))
        if as_json:
            doc = {"metadata": meta.to_dict(), "events": events}
            typer.echo(visible_json(json.dumps(doc, ensure_ascii=False, indent=2)))
        else:
            _print_session(meta, events)
        return
    sessions = store.recent(limit)
    if as_json:
        typer.echo(visible_json(json.dumps([m.to_dict() for m in sessions], ensure_ascii=False, indent=2)))
    elif not sessions:
        _echo(f"no sessions for {bot} in {slug}")
    else:
        _print_list(sessions)


def _export(store: Any, bot: str, session: str | None, fmt: str, output: Path | None) -> None:
    from openbot.errors import NotFoundError, UsageError
    from openbot.views.html import render_session_dir

    if fmt != "html":
        raise UsageError(f"--export {fmt!r} is not a format openbot writes", hint="use --export html")
    if session is None:
        recent = store.recent(1)
        if not recent:
            raise NotFoundError(f"no sessions of {bot} to export", hint="run the bot first")
        session = recent[0].session_id
    meta = store.get(session)
    if meta.extra.get("legacy"):  # a Rust openbot session: read-only, and not in a shape the page reads
        raise UsageError(
            f"session {meta.session_number} is a Rust openbot record; export shows openbot's own only",
            hint=f"show it with: openbot history {bot} --session {meta.session_id}",
        )
    session_dir = store.session_dir(meta.session_id)
    page = render_session_dir(session_dir)
    # Never into the user's checkout by default: the page belongs with the session it shows.
    target = output if output is not None else session_dir / "transcript.html"
    try:
        _write_page(target, page, private=output is None)
    except IsADirectoryError:
        raise UsageError(
            f"cannot write {target}: it is a directory", hint=f"give a file name, e.g. -o {target / 'x.html'}"
        ) from None
    except FileNotFoundError:
        raise UsageError(
            f"cannot write {target}: the directory {target.parent} does not exist",
            hint="create it first or choose another -o path",
        ) from None
    except OSError as e:
        raise UsageError(f"cannot write {target}: {e.strerror}") from None
    _echo(f"wrote {target}")


def _write_page(target: Path, page: str, private: bool) -> None:
    """Write the page; under OPENBOT_HOME as a user-only (0600) file, elsewhere with the usual umask."""
    import os

    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600 if private else 0o666)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(page)
