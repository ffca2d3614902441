"""Reading the fields of a stored event record by type, and cutting text into lines, for the transcript.

Records are read tolerantly: a missing field takes its default (older records lack newer fields), a
field of the wrong type raises `Damaged` (a hand-edited or damaged record), and every string comes back
through `escapes.visible`, since the agent wrote it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from openbot.views.escapes import visible


def money(cost: float, known: bool = True, places: int = 4) -> str:
    """A cost in USD, or "?" when part of it was priced without a known price."""
    return f"${cost:.{places}f}" if known else "?"


def json_text(value: object) -> str:
    return visible(json.dumps(value, ensure_ascii=False, default=str))


def lines_of(text: str) -> list[str]:
    """Like `str.splitlines` but only at `\\n`: any other line break (`\\r`) was made visible, not a break."""
    lines = text.split("\n")
    return lines[:-1] if lines[-1] == "" else lines


def excerpt(lines: list[str], head: int, tail: int) -> tuple[list[str], int, list[str]]:
    """The first `head` and last `tail` lines and how many lie between (0: nothing is hidden, since a
    marker in place of a single line would hide nothing)."""
    hidden = len(lines) - head - tail
    if hidden <= 1:
        return lines, 0, []
    return lines[:head], hidden, lines[-tail:]


class Damaged(Exception):
    """A field of a known event has a value of the wrong type (a hand-edited or damaged record)."""


def text(record: Mapping[str, object], key: str, default: str = "") -> str:
    value = record.get(key)
    if value is None:
        return default  # older records lack newer fields
    if not isinstance(value, str):
        raise Damaged(key)
    return visible(value)


def number(record: Mapping[str, object], key: str) -> float:
    value = record.get(key)
    if value is not None and (not isinstance(value, int | float) or isinstance(value, bool)):
        raise Damaged(key)
    return float(value or 0)


def integer(record: Mapping[str, object], key: str) -> int | None:
    value = record.get(key)
    if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
        raise Damaged(key)
    return value


def flag(record: Mapping[str, object], key: str) -> bool:
    value = record.get(key)
    if value is not None and not isinstance(value, bool):
        raise Damaged(key)
    return bool(value)


def mapping(record: Mapping[str, object], key: str) -> Mapping[str, object]:
    value = record.get(key)
    if value is not None and not isinstance(value, Mapping):
        raise Damaged(key)
    return value or {}


def verified_text(r: Mapping[str, object]) -> str:
    """openbot's own check of the work, in one line, from a run's `--json` summary (docs/VERIFY.md);
    "" for a run that did not complete and nothing checked (merge_unverified off)."""
    loose = (
        " (merge_unverified = true: merge applies without it)" if r.get("merge_unverified") is True else ""
    )
    verification = r.get("verification")
    reason = verification.get("reason", "") if isinstance(verification, Mapping) else ""
    if r.get("verified") is True:
        sha = str(r.get("verified_sha") or "")[:12]
        return f"verified: every check passed at {sha} (git notes --ref=openbot){loose}"
    if r.get("verified") is False:
        return f"NOT verified: {reason}{loose}"
    unchecked = loose or r.get("status") == "completed"  # exit 0 on work nothing checked: said so
    return f"not verified: nothing checked the work{loose}" if unchecked else ""


def review_entry(r: Mapping[str, object]) -> tuple[str, str, dict[str, object]]:
    """A `review` event (run/review.py) as a transcript entry: ("passed" | "failed", its text, with the
    reviewer's words when it asked for changes, its fields)."""
    data = {k: v for k, v in r.items() if k not in ("type", "ts", "seq")}
    approved, model = r.get("approved") is True, str(r.get("model") or "?")
    said = f"review {r.get('attempt')} of {r.get('attempts')} by {model}"
    if approved:
        return "passed", f"approved: {said}", data
    note = f" ({r['note']})" if r.get("note") else ""
    comments = "".join(f"\n    {line}" for line in str(r.get("comments") or "").splitlines()[-40:])
    return "failed", f"changes requested: {said}{note}{comments}", data


def reported(kind: str, r: Mapping[str, object]) -> tuple[str, str, dict[str, object]]:
    """A `review` or `feedback` event as a transcript entry's label, text and fields."""
    return review_entry(r) if kind == "review" else feedback_entry(r)


def feedback_entry(r: Mapping[str, object]) -> tuple[str, str, dict[str, object]]:
    """A `feedback` event (run/feedback.py): "passed" when every item was addressed, a line per item."""
    data = {k: v for k, v in r.items() if k not in ("type", "ts", "seq")}
    lines = feedback_lines(r)
    return ("passed" if r.get("addressed") == r.get("total") else "failed"), "\n    ".join(lines), data


def feedback_lines(r: Mapping[str, object]) -> list[str]:
    """`2 of 3 feedback item(s) addressed` and a line per item (its commits, the bot's words), inert."""
    items = r.get("items")
    lines = [f"{r.get('addressed')} of {r.get('total')} feedback item(s) addressed ({r.get('pull_request')})"]
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, Mapping):
            continue
        commits = item.get("commits")
        shas = ", ".join(str(c)[:12] for c in commits) if isinstance(commits, list) else ""
        said = "addressed" if item.get("addressed") is True else "not addressed"
        how = f": {item.get('how')}" if item.get("how") else ""
        lines.append(f"{item.get('id')} {item.get('title')}: {said}{f' in {shas}' if shas else ''}{how}")
    return [visible(" ".join(line.split())) for line in lines]


def reviewed_text(r: Mapping[str, object]) -> str:
    """The bot's review (docs/VERIFY.md, "Review") in one line, from a run's summary; "" without one."""
    review, reviewed = r.get("review"), r.get("reviewed")
    last = review if isinstance(review, Mapping) else {}
    said = f"{last.get('attempt')} review(s) by {last.get('model') or '?'}"
    if reviewed is True:
        return f"reviewed: approved after {said}"
    return f"NOT approved by its review: {said}" if reviewed is False else ""


IDS_SHOWN = 10  # item ids named in one line; the rest counted


def item_ids(items: object, addressed: bool) -> str:
    """`F1, F3` — the ids of a run's feedback items addressed (or not), at most IDS_SHOWN, inert."""
    listed = items if isinstance(items, list) else []
    ids = [
        str(i.get("id"))
        for i in listed
        if isinstance(i, Mapping) and (i.get("addressed") is True) == addressed
    ]
    more = f" and {len(ids) - IDS_SHOWN} more" if len(ids) > IDS_SHOWN else ""
    return visible(" ".join((", ".join(ids[:IDS_SHOWN]) + more).split()))


def feedback_text(r: Mapping[str, object]) -> str:
    """The run's --feedback outcome in one line, from its summary; "" for a run without feedback:
    `feedback: 2 of 3 items addressed (F1, F3); F2 not addressed — see history`."""
    fb = r.get("feedback")
    if not isinstance(fb, Mapping):
        return ""
    done, left = item_ids(fb.get("items"), True), item_ids(fb.get("items"), False)
    line = f"feedback: {fb.get('addressed')} of {fb.get('total')} items addressed" + (
        f" ({done})" if done else ""
    )
    return line + (f"; {left} not addressed — see history" if left else "")


def failed_output(r: Mapping[str, object]) -> list[str]:
    """The end of the failed check's output (run/verify_outcome.py `shown_tail`), from a run's summary:
    each line made inert, to show under `verified_text`; [] when the check passed or said nothing."""
    verification = r.get("verification")
    tail = verification.get("tail") if isinstance(verification, Mapping) else None
    if r.get("verified") is not False or not isinstance(tail, str):
        return []
    return [visible(line) for line in tail.splitlines()]


def verification_status(r: Mapping[str, object]) -> str:
    """`passed`, `failed` or `none` (nothing checked the work), from `verified`."""
    verified = r.get("verified")
    return "passed" if verified is True else "failed" if verified is False else "none"


def status_text(r: Mapping[str, object]) -> str:
    """The status as said where a run ends: `completed: nothing changed in the repository` for a completion
    that left the repository as it found it (run/unchanged.py)."""
    status = str(r.get("status") or "")
    unchanged = status == "completed" and r.get("nothing_changed") is True
    return f"{status}: nothing changed in the repository" if unchanged else status


def network_text(r: Mapping[str, object]) -> str:
    """A connection through a listed network's proxy (`network`): where, and what became of it."""
    where, key = f"{text(r, 'host')}:{integer(r, 'port')}", text(r, "key")
    n = integer(r, "connections") or 1  # repeats of an earlier event's, written together (netevent.py)
    where += f" ({n} more connections like it)" if n > 1 else ""
    if flag(r, "allowed"):
        sent, received = integer(r, "bytes_sent") or 0, integer(r, "bytes_received") or 0
        cut = f"; {text(r, 'reason')}" if text(r, "reason") else ""  # the proxy's bounds (proxy.py)
        return f"network: {where} ({sent} bytes sent, {received} received{cut}; `{key}`)"
    return f"network: {where} refused: {text(r, 'reason')} (`{key}` lists what may be reached)"
