"""The feedback file `openbot run --feedback FILE` reads: what a bot's open pull request got since the last
night — failed checks, reviews, review comments, comments of people with write access — as `openbot
feedback gather` writes it (docs/ci.md, "Feedback"). Checked once, here, before anything is created: a bad
file is exit 2 in one line naming the file and the key. Every text in it is the forge's, so untrusted: it
is cut to a bound here, and quoted as data wherever it goes (run/feedback.py).

    {"version": 1, "repository": "owner/name",
     "pull_request": {"number": 7, "url": "…", "head": "openbot/nightly/fixer", "head_sha": "<40 hex>"},
     "items": [{"id": "F1", "kind": "check", "name": "tests", "conclusion": "failure", "url": "…",
                "log_tail": "…"}, …],
     "ignored": [{"kind": "comment", "author": "mallory", "url": "…", "reason": "no write access"}]}

Keys beyond these are allowed (the format grows by adding keys) and not read.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

from openbot.errors import ConfigError

VERSION = 1
MAX_BYTES = 4 * 1024 * 1024
MAX_ITEMS = 50  # given to the bot; the rest are recorded as left out
MAX_TEXT = 8_000  # characters of one body or log tail the bot reads
MAX_NAME = 200  # characters of a name, author, state, path or url
HINT = "docs/ci.md, 'Feedback', shows the format `openbot feedback gather` writes"
ID_RE = re.compile(r"^F[1-9][0-9]{0,3}$")
# What each kind must have, beside id and kind: (key, type). `line` may also be null.
KINDS: dict[str, tuple[tuple[str, type], ...]] = {
    "check": (("name", str), ("conclusion", str), ("url", str)),
    "review": (("author", str), ("state", str), ("body", str), ("url", str)),
    "review_comment": (("author", str), ("path", str), ("body", str), ("url", str)),
    "comment": (("author", str), ("body", str), ("url", str)),
}
TEXTS = ("body", "log_tail")


@dataclass(frozen=True)
class Item:
    id: str
    kind: str
    fields: dict[str, object]  # the kind's keys, strings cut to their bound (log_tail, line when given)

    def get(self, key: str) -> str:
        value = self.fields.get(key)
        return "" if value is None else str(value)


@dataclass(frozen=True)
class Feedback:
    path: str
    repository: str
    number: int
    url: str
    head: str
    head_sha: str
    items: tuple[Item, ...]
    ignored: int = 0  # entries gather left out (no write access, …): counted, never shown to the bot
    left_out: tuple[str, ...] = field(default_factory=tuple)  # ids past MAX_ITEMS


def load_feedback(path: Path) -> Feedback:
    """The file at `path`, checked; a ConfigError (exit 2) naming the file and key otherwise."""
    try:
        with path.open("rb") as f:
            data = f.read(MAX_BYTES + 1)
    except OSError as e:
        raise ConfigError(f"{path}: cannot read the feedback file: {e.strerror or e}", hint=HINT) from None
    if len(data) > MAX_BYTES:
        raise ConfigError(f"{path}: the feedback file is over {MAX_BYTES // 1024 // 1024} MB", hint=HINT)
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise ConfigError(f"{path}: not a JSON feedback file ({e})", hint=HINT) from None
    return parse_feedback(doc, str(path))


def parse_feedback(doc: object, source: str) -> Feedback:
    top = _table(doc, source, "")
    if top.get("version") != VERSION:
        _bad(source, "version", f"must be {VERSION}", top.get("version"))
    repository = _text(top, source, "repository")
    if top.get("pull_request") is None and top.get("items") == []:  # gather found no open pull request
        return Feedback(source, repository, 0, "", "", "", ())
    pr = _table(top.get("pull_request"), source, "pull_request")
    number = pr.get("number")
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        _bad(source, "pull_request.number", "must be a pull request's number", number)
    raw = top.get("items")
    if not isinstance(raw, list):
        _bad(source, "items", "must be a list", raw)
    items = [_item(entry, source, f"items[{i}]") for i, entry in enumerate(raw)]
    ids = [item.id for item in items]
    for i, item_id in enumerate(ids):
        if item_id in ids[:i]:
            _bad(source, f"items[{i}].id", "is given twice", item_id)
    ignored = top.get("ignored", [])
    if not isinstance(ignored, list):
        _bad(source, "ignored", "must be a list", ignored)
    return Feedback(
        path=source,
        repository=repository,
        number=number,
        url=_text(pr, source, "url", "pull_request."),
        head=_text(pr, source, "head", "pull_request."),
        head_sha=_text(pr, source, "head_sha", "pull_request."),
        items=tuple(items[:MAX_ITEMS]),
        ignored=len(ignored),
        left_out=tuple(ids[MAX_ITEMS:]),
    )


def _item(entry: object, source: str, where: str) -> Item:
    table = _table(entry, source, where)
    item_id, kind = table.get("id"), table.get("kind")
    if not isinstance(item_id, str) or not ID_RE.match(item_id):
        _bad(source, f"{where}.id", "must be F and a number (F1, F2, …)", item_id)
    if kind not in KINDS:
        _bad(source, f"{where}.kind", f"must be one of {', '.join(KINDS)}", kind)
    fields: dict[str, object] = {key: _text(table, source, key, f"{where}.") for key, _ in KINDS[kind]}
    if kind == "check" or "log_tail" in table:
        fields["log_tail"] = _text(table, source, "log_tail", f"{where}.", required=False)
    if kind == "review_comment":
        line = table.get("line")
        if line is not None and (isinstance(line, bool) or not isinstance(line, int)):
            _bad(source, f"{where}.line", "must be a line number or null", line)
        fields["line"] = line
    return Item(item_id, kind, fields)


def _table(value: object, source: str, key: str) -> dict[str, object]:
    if not isinstance(value, dict):
        _bad(source, key or "(the top level)", "must be a JSON object", value)
    return value


def _text(table: dict[str, object], source: str, key: str, prefix: str = "", required: bool = True) -> str:
    value = table.get(key, None if required else "")
    if not isinstance(value, str):
        _bad(source, prefix + key, "must be a string" if key in table else "is missing", value)
    bound = MAX_TEXT if key in TEXTS else MAX_NAME
    if len(value) > bound:  # a log's tail is its end; anything else its start
        cut = len(value) - bound
        return f"[{cut:,} characters cut]\n" + value[-bound:] if key == "log_tail" else value[:bound] + "…"
    return value


def _bad(source: str, key: str, what: str, value: object) -> NoReturn:
    got = "" if value is None else f", got {json.dumps(value)[:60]}"
    raise ConfigError(f"{source}: key '{key}' {what}{got}", hint=HINT)
