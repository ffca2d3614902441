"""`openbot ps` (the runs in flight under OPENBOT_HOME) and `openbot logs [-f] <bot|run_id>` (a run's
events as the live view says them, following it until it ends).

A run in flight is a run.json saying `running` whose process is alive on this machine (state/runstate.py
`process_alive`): a killed run's record still says `running` until a later run's sweep marks it failed.
A run's events live in two places: its own log (runs/<id>/events.jsonl: the lines the run says) and one
log per session (history/<session>/events.jsonl: the model's words and the commands); `logs` reads both,
in the order they were written, through the live view's rendering (views/live.py).
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from openbot.cli.completion import bot_names
from openbot.cli.typer_app import app
from openbot.views.escapes import one_line, visible, visible_json

if TYPE_CHECKING:
    from openbot.state.runstate import RunRecord

POLL_SECS = 0.2  # how often `logs -f` looks for new lines and whether the run has ended


def _records() -> list[RunRecord]:
    """Every readable run record under OPENBOT_HOME, oldest first (a damaged one is skipped: `ps` and
    `logs` show runs, `history` and `--resume` say what is wrong with a record)."""
    from openbot import paths
    from openbot.errors import OpenbotError
    from openbot.state.runstate import RUN_ID_RE, RunRecord

    found = []
    for path in paths.bots_dir().glob("*/workspaces/*/runs/*/run.json"):
        if RUN_ID_RE.match(path.parent.name):
            try:
                found.append(RunRecord.load(path))
            except OpenbotError:
                continue
    return sorted(found, key=lambda r: r.run_id)


def _elapsed(rec: RunRecord) -> str:
    from openbot.views.live import clock

    try:
        started = datetime.fromisoformat(rec.created_at)
    except ValueError:
        return "?"
    return clock(max(0.0, (datetime.now(UTC) - started).total_seconds()))


def _row(rec: RunRecord) -> dict[str, object]:
    from openbot.views.fields import money

    return {
        "bot": rec.bot,
        "repository": rec.repo_root or rec.workdir,
        "run_id": rec.run_id,
        "elapsed": _elapsed(rec),
        "iteration": rec.iterations,
        "commands": rec.command_count,
        "cost": money(rec.cost_usd, rec.cost_known, places=2),
        "pid": rec.pid,
    }


@app.command()
def ps(as_json: bool = typer.Option(False, "--json", help="Print the runs as a JSON list.")) -> None:
    """The runs in flight under OPENBOT_HOME: bot, repository, run id, elapsed, iteration, cost so far."""
    rows = [_row(r) for r in _records() if r.process_alive()]
    if as_json:
        typer.echo(visible_json(json.dumps(rows, ensure_ascii=False, indent=2)))
        return
    if not rows:
        typer.echo("no runs in flight")
        return
    width = max(len(str(r["bot"])) for r in rows)
    typer.echo(f"{'bot':<{width}}  {'run id':<21}  {'elapsed':>7}  {'iter':>4}  {'cost':>7}  repository")
    for r in rows:
        typer.echo(
            visible(
                f"{r['bot']:<{width}}  {r['run_id']:<21}  {r['elapsed']:>7}  {r['iteration']:>4}  "
                f"{r['cost']:>7}  {r['repository']}"
            )
        )


def _find(target: str) -> RunRecord:
    """The run `target` names: a run id, or a bot's newest run (the one in flight, if any)."""
    from openbot.errors import NotFoundError
    from openbot.state.runstate import RUN_ID_RE

    runs = _records()
    if RUN_ID_RE.match(target):
        found = [r for r in runs if r.run_id == target]
    else:
        mine = [r for r in runs if r.bot == target]
        found = [r for r in mine if r.process_alive()][-1:] or mine[-1:]
    if not found:
        raise NotFoundError(
            f"no run of bot or with run id '{target}' under {_home()}",
            hint="`openbot ps` lists the runs in flight, `openbot history <bot>` a bot's runs",
        )
    return found[-1]


def _home() -> Path:
    from openbot import paths

    return paths.home()


@dataclass
class _Follower:
    """Reads the new complete lines of a run's logs: its own and each of its sessions'."""

    rec: RunRecord
    offsets: dict[Path, int] = field(default_factory=dict)

    def logs(self) -> list[Path]:
        from openbot import paths

        history = paths.history_dir(self.rec.bot, self.rec.project)
        return [self.rec.dir / "events.jsonl", *(history / s / "events.jsonl" for s in self.rec.session_ids)]

    def new_records(self) -> list[dict[str, object]]:
        found: list[dict[str, object]] = []
        for path in self.logs():
            found += self._read(path)
        return sorted(found, key=lambda r: str(r.get("ts") or ""))  # stable: each log keeps its order

    def _read(self, path: Path) -> list[dict[str, object]]:
        start = self.offsets.get(path, 0)
        try:
            with path.open("rb") as f:
                f.seek(start)
                data = f.read()
        except OSError:  # not written yet
            return []
        end = data.rfind(b"\n") + 1  # an unfinished last line waits for the next read
        self.offsets[path] = start + end
        records = []
        for line in data[:end].split(b"\n"):
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                records.append(record)
        return records


def _ended(rec: RunRecord) -> tuple[RunRecord, bool]:
    """The record as it is now, and whether its run is over (finished, or its process gone)."""
    from openbot.errors import OpenbotError
    from openbot.state.runstate import RunRecord

    try:
        now = RunRecord.load(rec.dir / "run.json")
    except OpenbotError:
        return rec, True
    return now, now.status != "running" or not now.process_alive()


@app.command()
def logs(
    target: str = typer.Argument(
        ..., help="A bot (its newest run) or a run id.", metavar="BOT|RUN_ID", autocompletion=bot_names
    ),
    follow: bool = typer.Option(False, "-f", "--follow", help="Keep printing until the run ends."),
) -> None:
    """A run's events as readable lines (those the run printed where it ran); -f follows it to its end."""
    from openbot.views.live import LiveView
    from openbot.views.transcript import Called, entry

    rec = _find(target)
    view = LiveView(sys.stdout, stream_text=False)
    reader = _Follower(rec)
    typer.echo(visible(f"run {rec.run_id} of {rec.bot} ({rec.status})"))
    while True:
        reader.rec, over = _ended(reader.rec)  # before reading: a line written before the end is shown
        for record in reader.new_records():
            shown = entry(record)
            if isinstance(shown, Called) and shown.tool == "shell":  # live, its start says this line
                view.line(f"  $ {one_line(shown.gist, 160)}")
            else:
                view.show(shown)
        if not follow or over:
            break
        time.sleep(POLL_SECS)
    if follow:
        typer.echo(visible(f"run {reader.rec.run_id} ended: {reader.rec.status}"))
