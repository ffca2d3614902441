"""The HTML digest's picture: cost and verified/unverified runs per day, as inline SVG (no JavaScript, no
library: the page stays one self-contained file that any browser or mail client shows).

Each day (from the run id's UTC date) gets two bars: its cost, scaled to the dearest day, and its runs,
stacked verified (green) on the rest (grey), scaled to the busiest day. Every bar carries its day, kind and
value as `data-` attributes and a `<title>` (the tooltip), so what it shows can be read back exactly.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

HEIGHT, DAY_WIDTH, BAR, TOP, BOTTOM, LEFT = 120, 44, 16, 14, 30, 8
COLOURS = {"cost": "#4a6fa5", "verified": "#3c9a5f", "unverified": "#b8b8b8"}


def per_day(rows: Sequence[Mapping[str, object]]) -> dict[str, dict[str, float]]:
    """{"2026-11-28": {"cost": USD, "verified": runs, "unverified": runs}}, oldest day first."""
    days: dict[str, dict[str, float]] = {}
    for r in sorted(rows, key=lambda r: str(r.get("run_id") or "")):
        run_id = str(r.get("run_id") or "")
        day = f"{run_id[:4]}-{run_id[4:6]}-{run_id[6:8]}" if run_id[:8].isdigit() else "?"
        totals = days.setdefault(day, {"cost": 0.0, "verified": 0, "unverified": 0})
        cost = r.get("cost_usd")
        totals["cost"] += float(cost) if isinstance(cost, int | float) else 0.0
        totals["verified" if r.get("verified") is True else "unverified"] += 1
    return days


def _bar(x: float, bottom: float, height: float, day: str, kind: str, value: str) -> str:
    return (
        f'<rect x="{x:.1f}" y="{bottom - height:.1f}" width="{BAR}" height="{height:.1f}" '
        f'fill="{COLOURS[kind]}" data-day="{day}" data-kind="{kind}" data-value="{value}">'
        f"<title>{html.escape(day)}: {kind} {value}</title></rect>"
    )


def svg(rows: Sequence[Mapping[str, object]]) -> str:
    """The chart, or "" when there are no runs."""
    days = per_day(rows)
    if not days:
        return ""
    most_cost = max(d["cost"] for d in days.values()) or 1.0
    most_runs = max(d["verified"] + d["unverified"] for d in days.values()) or 1
    bottom, scale = TOP + HEIGHT, float(HEIGHT)
    width = LEFT * 2 + DAY_WIDTH * len(days)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="digest-chart" width="{width}" '
        f'height="{bottom + BOTTOM}" role="img" aria-label="cost and verified runs per day">',
        f'<text x="{LEFT}" y="10" font-size="10">cost per day (blue, highest ${most_cost:.2f}); '
        f"runs per day: verified (green), not verified (grey)</text>",
    ]
    for i, (day, d) in enumerate(days.items()):
        x = LEFT + i * DAY_WIDTH
        esc = html.escape(day, quote=True)
        parts.append(_bar(x, bottom, scale * d["cost"] / most_cost, esc, "cost", f"{d['cost']:.4f}"))
        good = scale * d["verified"] / most_runs
        parts.append(_bar(x + BAR + 2, bottom, good, esc, "verified", f"{d['verified']:.0f}"))
        rest = scale * d["unverified"] / most_runs
        parts.append(_bar(x + BAR + 2, bottom - good, rest, esc, "unverified", f"{d['unverified']:.0f}"))
        parts.append(f'<text x="{x:.1f}" y="{bottom + 12}" font-size="9">{esc[5:]}</text>')
    parts.append("</svg>")
    return "".join(parts)
