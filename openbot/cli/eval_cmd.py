"""`openbot eval`: run a bot over a task suite (or your own history), report what it solved (docs/EVAL.md)."""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from openbot.cli.typer_app import app
from openbot.errors import UsageError

if TYPE_CHECKING:
    from openbot.run.eval.check import Walls
    from openbot.run.eval.runtask import TaskResult
    from openbot.run.eval.suite import Task


@app.command("eval")
def eval_command(
    suite: Optional[Path] = typer.Argument(None, help="The suite file (TOML, docs/EVAL.md)."),  # noqa: UP045
    bot: Optional[str] = typer.Option(None, "--bot", "-b", help="The bot to run (default: the suite's bot)."),  # noqa: UP045
    from_history: int | None = typer.Option(
        None,
        "--from-history",
        min=1,
        help="Redo the last N commits of this repository that changed code and tests.",
    ),
    check: str = typer.Option(
        "", "--check", help="--from-history: the check command; {tests} = the commit's test files."
    ),
    max_iterations: int | None = typer.Option(None, "--max-iterations", min=0, help="--from-history: limit."),
    max_minutes: float | None = typer.Option(None, "--max-minutes", min=0, help="--from-history: limit."),
    max_cost_usd: float | None = typer.Option(None, "--max-cost-usd", min=0, help="--from-history: limit."),
    model: Optional[str] = typer.Option(None, "--model", "-m", help="Run every task with this model."),  # noqa: UP045
    json_out: Optional[Path] = typer.Option(None, "--json", help="Also write the results as JSON here."),  # noqa: UP045
    keep: bool = typer.Option(False, "--keep", help="Keep each task's repository, home and check clone."),
    only: str = typer.Option(
        "", "--tasks", help="Run only these tasks: names, comma-separated (a history task: its short sha)."
    ),
    parallel: int = typer.Option(1, "--parallel", min=1, help="Tasks at once (each its own run)."),
    attempts: int | None = typer.Option(
        None, "--attempts", min=1, help="Passed to each run: N attempts, the first verified kept."
    ),
    check_as_verify: bool = typer.Option(
        False, "--check-as-verify", help="The task's check is the bot's `verify` for its run."
    ),
) -> None:
    """Run a bot over tasks, each in a fresh repository and OPENBOT_HOME; solved = its check passes."""
    name, tasks = _tasks(suite, bot, from_history, check, (max_iterations, max_minutes, max_cost_usd))
    tasks = _only(tasks, only)
    from openbot.run.eval import report
    from openbot.sandbox import protect_own_environment

    # The model key and every other secret of the user's environment are in eval's own: no command of
    # the bot's (an agent or a check in the Landlock-only fallback shares its PID namespace) may read it.
    protect_own_environment()
    workdir = Path(tempfile.mkdtemp(prefix="openbot-eval-"))
    try:
        walls = _probe(name, workdir / "probe")
    except BaseException:
        shutil.rmtree(workdir, ignore_errors=True)
        raise
    shutil.rmtree(workdir / "probe", ignore_errors=True)
    run_args = (*(("--model", model) if model else ()), *(("--attempts", str(attempts)) if attempts else ()))
    results = _run_all(tasks, name, workdir, run_args, walls, parallel, check_as_verify)
    typer.echo(report.table(results))
    typer.echo("")
    typer.echo(report.verdict(results))
    meta = {
        "bot": name,
        "suite": str(suite) if suite else f"--from-history {from_history}",
        "model": model,
        "attempts": attempts,
        "check_as_verify": check_as_verify,
    }
    if json_out is not None:
        json_out.write_text(json.dumps(report.to_json(results, meta), indent=2) + "\n")
    if keep:
        typer.echo(f"kept: {workdir}", err=True)
    else:
        shutil.rmtree(workdir, ignore_errors=True)
    raise typer.Exit(0 if results and all(r.solved for r in results) else 1)


def _probe(bot: str, where: Path) -> Walls:
    """What is wrong with the bot or the machine is one line now (exit 2), not N failed tasks: an unknown
    bot, a bot directory too big to copy, checks that cannot be confined. Says once what the copy of the
    bot's directory leaves out and what the checks' sandbox lacks (sandbox_fallback = "warn")."""
    from openbot.run.eval.check import probe, walls_of
    from openbot.run.eval.prepare import make_home

    _, left_out = make_home(bot, where / "home")
    if left_out:
        _say(f"not copied from your OPENBOT_HOME (links out, FIFOs, devices): {', '.join(left_out)}")
    walls = walls_of(bot)
    warning = probe(walls, where / "check")
    if warning:
        _say(f"WARNING: the checks run with what this machine can enforce: {warning}")
    return walls


def _say(message: str) -> None:
    print(f"eval: {message}", file=sys.stderr, flush=True)


def _tasks(
    suite: Path | None,
    bot: str | None,
    from_history: int | None,
    check: str,
    limits: tuple[int | None, float | None, float | None],
) -> tuple[str, list[Task]]:
    """The bot and the tasks, from the suite file or from history; every usage mistake is exit 2."""
    from openbot.config.bots import check_name
    from openbot.run.eval.suite import Limits, load_suite

    if (suite is None) == (from_history is None):
        raise UsageError("give a suite file or --from-history N", hint="openbot eval suite.toml --bot <bot>")
    if suite is not None:
        if check or any(v is not None for v in limits):
            raise UsageError(
                "--check and the limit flags go with --from-history", hint="a suite sets them per task"
            )
        loaded = load_suite(suite)
        name = bot or loaded.bot
        if not name:
            raise UsageError(f"{suite} names no bot", hint='add bot = "<name>" to it, or pass --bot')
        return check_name(name), loaded.tasks
    if not bot:
        raise UsageError(
            "--from-history needs --bot", hint="openbot eval --from-history 10 --bot <bot> --check ..."
        )
    if not check:
        raise UsageError(
            "--from-history needs --check",
            hint="the command that runs the tests, e.g. --check 'pytest -q {tests}'",
        )
    return check_name(bot), _history(from_history or 0, check, Limits(*limits))


def _only(tasks: list[Task], only: str) -> list[Task]:
    """The tasks `--tasks` names, in the suite's order; a name that matches none is exit 2."""
    wanted = [n.strip() for n in only.split(",") if n.strip()]
    if not wanted:
        return tasks
    keys = {t.name: {t.name, t.name.split()[0]} for t in tasks}
    unknown = [w for w in wanted if not any(w in k for k in keys.values())]
    if unknown:
        shown = ", ".join(t.name.split()[0] for t in tasks[:10])
        raise UsageError(f"--tasks: no task named {unknown[0]!r}", hint=f"the tasks are: {shown}")
    return [t for t in tasks if keys[t.name] & set(wanted)]


def _history(count: int, check: str, limits: object) -> list[Task]:
    from openbot.git.repo import find_repo
    from openbot.run.eval.history import history_tasks
    from openbot.run.eval.suite import Limits

    assert isinstance(limits, Limits)
    repo = find_repo(Path.cwd())
    if repo is None:
        raise UsageError("--from-history works in a git repository", hint="cd into your repository first")
    tasks = history_tasks(repo.workdir, count, check, limits)
    if not tasks:
        raise UsageError(
            f"no commit of {repo.workdir} changed both code and tests",
            hint="write a suite file instead (docs/EVAL.md)",
        )
    return tasks


def _run_all(
    tasks: list[Task],
    bot: str,
    workdir: Path,
    run_args: tuple[str, ...],
    walls: Walls,
    parallel: int,
    as_verify: bool,
) -> list[TaskResult]:
    """Every task, `parallel` at a time, each reported as it ends; the results in the suite's order."""
    from concurrent.futures import ThreadPoolExecutor

    from openbot.run.eval.report import solved_cell
    from openbot.run.eval.runtask import run_task

    def one(i: int, task: Task) -> TaskResult:
        print(f"eval: [{i}/{len(tasks)}] {task.name} …", file=sys.stderr, flush=True)
        r = run_task(task, bot, workdir / f"task-{i:03d}", run_args, walls, as_verify)
        why = f": {r.error}" if r.error else ""
        said = solved_cell(r, markdown=False)  # a terminal line: no markdown
        print(
            f"eval: [{i}/{len(tasks)}] {task.name}: {said} ({r.status}, {r.wall_secs:.0f} s){why}",
            file=sys.stderr,
            flush=True,
        )
        return r

    with ThreadPoolExecutor(max_workers=parallel) as pool:
        return list(pool.map(one, range(1, len(tasks) + 1), tasks))
