"""`openbot digest` and `openbot fleet run`'s roll-up: the rows of openbot.state.digest as markdown,
HTML or JSON. Every value is bot- or user-derived text: cells are escaped as the CI step summary's are."""

from __future__ import annotations

import html
import json
from collections import Counter
from typing import Any

from openbot.views.ci_summary import cell, code, cost
from openbot.views.digest_chart import svg
from openbot.views.escapes import shorten, visible

FLEET = "fleet run"  # the `since` of `openbot fleet run`'s roll-up
HEAD = ("Bot", "Repository", "Status", "Verified", "Diff", "Cost", "Network", "Why it stopped")


def totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The runs, their cost, statuses and (when a run had a listed network) its proxies' connections."""
    network = dict(sum((Counter(r["network"]) for r in rows), Counter()))
    return {
        "runs": len(rows),
        "cost_usd": round(sum(float(r["cost_usd"]) for r in rows), 6),
        "by_status": dict(Counter(str(r["status"]) for r in rows)),
        **({"network": network} if network else {}),
    }


def as_json(rows: list[dict[str, object]], since: str, **extra: object) -> str:
    report = {"since": since, "totals": totals(rows), "runs": rows, **extra}
    return visible(json.dumps(report, indent=2))


def _verified(r: dict[str, Any]) -> str:
    unchecked = "not verified: nothing checked the work" if r["status"] == "completed" else "—"
    return {True: "yes", False: "NO"}.get(r["verified"], unchecked)


def _diff(r: dict[str, object]) -> str:
    d = r["diffstat"]
    if not isinstance(d, dict):
        return "—"
    files = d.get("files", 0)
    return f"{files} file{'' if files == 1 else 's'} +{d.get('insertions', 0)} −{d.get('deletions', 0)}"


def _cost(r: dict[str, object]) -> str:
    return cost(r["cost_usd"]) if r["cost_known"] else "?"


def _network(r: dict[str, Any]) -> str:
    """Connections through the run's proxies (a listed network: docs/SANDBOX.md), refusals first."""
    n = r["network"]
    if not n["allowed"] and not n["refused"]:
        return "—"
    size = _size(n["bytes_sent"] + n["bytes_received"])
    return f"{n['refused']} refused, {n['allowed']} allowed ({size})"


def _size(count: int) -> str:
    if count < 1024:
        return f"{count} bytes"
    kb = count / 1024
    return f"{kb:.1f} KB" if kb < 1024 else f"{kb / 1024:.1f} MB"


def _why(r: dict[str, Any]) -> str:
    why = str(r["reason"] or (r["summary"].split("\n")[0] if r["status"] == "completed" else ""))
    left = r.get("feedback_left") or []
    not_addressed = f"not addressed: {'; '.join(str(x) for x in left)}" if left else ""
    return "; ".join(filter(None, [str(r.get("feedback") or ""), not_addressed, why]))


def cells(r: dict[str, object]) -> tuple[str, ...]:
    # the project slug is what budget.toml's [repos.<slug>] names (docs/BUDGET.md)
    repo = (
        f"{r['repo']} ({r['project']})"
        if r["repo"] and r["project"]
        else str(r["repo"] or r["project"] or "")
    )
    return (
        str(r["bot"]),
        str(repo),
        str(r["status"]),
        _verified(r),
        _diff(r),
        _cost(r),
        _network(r),
        _why(r),
    )


def _heading(rows: list[dict[str, object]], since: str) -> str:
    t = totals(rows)
    statuses = ", ".join(f"{n} {s}" for s, n in sorted(t["by_status"].items())) or "no runs"
    runs = f"{t['runs']} run" + ("" if t["runs"] == 1 else "s")
    window = "in this fleet run" if since == FLEET else f"in the last {since}"
    refused = t.get("network", {}).get("refused", 0)
    refusals = f"; {refused} connection{'' if refused == 1 else 's'} refused" if refused else ""
    return f"{runs} {window}: {statuses}; {cost(t['cost_usd'])} spent{refusals}"


def markdown(rows: list[dict[str, Any]], since: str, budget: list[dict[str, object]] | None = None) -> str:
    lines = ["# openbot digest", "", cell(_heading(rows, since)), ""]
    for cap in budget or []:
        lost = f" — {cell(cap['matches'])}" if cap.get("matches") else ""
        lines.append(
            f"- budget: {cell(cap['cap'])}: {cost(cap['used_usd'])} used of {cost(cap['usd'])}{lost}"
        )
    lines += [""] if budget else []
    if rows:
        lines += ["| " + " | ".join(HEAD) + " |", "|" + "---|" * len(HEAD)]
        lines += ["| " + " | ".join(cell(c) for c in cells(r)) + " |" for r in rows]
    for r in rows:
        if not r["commands"] and not r["pr_url"]:
            continue
        lines += ["", f"**{cell(r['bot'])}** {code(r['run_id'])} ({cell(r['status'])})", ""]
        if r["pr_url"]:
            lines.append(f"- pull request: {code(r['pr_url'])}")
        lines += [f"- {name}: {code(command)}" for name, command in r["commands"].items()]
    return "\n".join(lines) + "\n"


def html_page(rows: list[dict[str, Any]], since: str) -> str:
    def esc(value: object) -> str:
        return html.escape(visible(str(value)))

    out = [
        "<!doctype html><html><head><meta charset='utf-8'><title>openbot digest</title>",
        "<style>body{font-family:sans-serif}td,th{border:1px solid #ccc;padding:4px;text-align:left}"
        "table{border-collapse:collapse}code{background:#f4f4f4}</style></head><body>",
        f"<h1>openbot digest</h1><p>{esc(_heading(rows, since))}</p>",
        svg(rows),  # cost and verified/unverified runs per day (views/digest_chart.py)
        "<table><tr>" + "".join(f"<th>{h}</th>" for h in (*HEAD, "Next")) + "</tr>",
    ]
    for r in rows:
        nxt = "".join(f"<div>{esc(k)}: <code>{esc(v)}</code></div>" for k, v in r["commands"].items())
        if r["pr_url"]:
            nxt = f"<div>pull request: <code>{esc(r['pr_url'])}</code></div>" + nxt
        out.append("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in cells(r)) + f"<td>{nxt}</td></tr>")
    out.append("</table></body></html>")
    return "\n".join(out) + "\n"


def _fit(text: str, column: str, width: int = 48) -> str:
    """A long cell is cut, never inside a name: a repository keeps its end (its name) from a `/`, anything
    else its start (what went wrong is said first) up to a word boundary."""
    if len(text) <= width:
        return text
    if column != "Repository":
        return shorten(text, width)
    tail = text[-(width - 1) :]
    return "…" + (tail[tail.index("/") :] if "/" in tail else tail)


def table(rows: list[dict[str, Any]], since: str) -> str:
    """The plain-text roll-up `openbot fleet run` prints, each run's next commands under it."""
    grid = [
        HEAD,
        *(
            tuple(_fit(visible(" ".join(c.split())), h) for c, h in zip(cells(r), HEAD, strict=True))
            for r in rows
        ),
    ]
    widths = [max(len(row[i]) for row in grid) for i in range(len(HEAD))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in grid]
    for r in rows:
        if r["commands"]:
            lines += [
                "",
                f"{visible(str(r['bot']))} {visible(str(r['run_id']))} ({visible(str(r['status']))}):",
            ]
            lines += [f"  {name}: {visible(command)}" for name, command in r["commands"].items()]
    return "\n".join([visible(_heading(rows, since)), *lines]) + "\n"
