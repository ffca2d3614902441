"""What `openbot eval` reports: one markdown table row per task, a one-line verdict, and the JSON record."""

from __future__ import annotations

from typing import Any

from openbot.run.eval.runtask import TaskResult
from openbot.views.escapes import visible
from openbot.views.fields import money

HEADER = (
    "| task | solved | check | exit | status | verified | model calls | tool calls | tokens | cost | wall |",
    "|---|---|---|---:|---|---|---:|---:|---:|---:|---:|",
)


def solved_cell(r: TaskResult, markdown: bool = True) -> str:
    """yes / no / not run; `markdown` bolds the case a user must never miss (the report's table), a
    progress line on the terminal says it plainly."""
    if r.error and r.check_exit is None and not r.checked:
        return "not run"
    if r.solved:
        return "yes"
    # The case a user must never miss: the run said it was done and the check says otherwise.
    if r.claimed_done:
        return "**no — claimed done**" if markdown else "NO — claimed done"
    return "no"


def _cell(text: str) -> str:
    return visible(text).replace("|", "\\|").replace("\n", " ")


def table(results: list[TaskResult]) -> str:
    rows = list(HEADER)
    for r in results:
        check = "—" if r.check_exit is None and not r.checked else _check_word(r)
        rows.append(
            f"| {_cell(r.name)} | {solved_cell(r)} | {check} | {_num(r.exit_code)} | {_cell(r.status)} "
            f"| {r.verified or '—'} | {r.model_calls} | {r.tool_calls} | {r.tokens:,} "
            f"| {money(r.cost_usd, r.cost_known)} | {r.wall_secs:.0f} s |"
        )
    return "\n".join(rows)


def _check_word(r: TaskResult) -> str:
    if r.check_exit is None:
        return "timed out"
    return "passed" if r.check_exit == 0 else f"failed ({r.check_exit})"


def _num(value: int | None) -> str:
    return "—" if value is None else str(value)


def verdict(results: list[TaskResult]) -> str:
    """'solves 3 of 5 at $0.0123 each · …': the line a user picks a model or a prompt by."""
    n = len(results)
    solved = sum(r.solved for r in results)
    known = all(r.cost_known for r in results)
    cost = sum(r.cost_usd for r in results)
    each = money(cost / n if n else 0.0, known)
    line = f"solves {solved} of {n} at {each} each"
    line += f" · tokens {sum(r.tokens for r in results):,} · wall {sum(r.wall_secs for r in results):.0f} s"
    claimed = sum(r.claimed_done and not r.solved for r in results)
    if claimed:
        line += f" · {claimed} claimed done but failed the check"
    verified = [r for r in results if r.verified]
    if verified:
        agree = sum((r.verified == "verified") == r.solved for r in verified)
        line += f" · the run's own verification agreed with the check on {agree} of {len(verified)}"
    return line


def to_json(results: list[TaskResult], meta: dict[str, Any]) -> dict[str, object]:
    return {
        **meta,
        "solved": sum(r.solved for r in results),
        "tasks": len(results),
        "tokens": sum(r.tokens for r in results),
        "cost_usd": round(sum(r.cost_usd for r in results), 6),
        "cost_known": all(r.cost_known for r in results),
        "wall_secs": round(sum(r.wall_secs for r in results), 1),
        "verdict": verdict(results),
        "results": [r.to_json() for r in results],
    }
