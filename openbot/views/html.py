"""One session as one self-contained HTML page: metadata on top, the transcript below (its entries read
by openbot.views.transcript, as for `history` and the live view).

The page has inline CSS only (no scripts, no external assets) so it can be attached to a CI artifact,
mailed, or opened from disk years later. Every string from metadata.json and events.jsonl is untrusted
(model output, command output) and goes through `_e`: control characters spelled out (`\x1b`, as on the
terminal), then `html.escape`; only the fixed markup here is raw.

    python -m openbot.views.html <session_dir> [-o page.html]
"""

from __future__ import annotations

import html
import json
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from openbot.events import read_events
from openbot.views.escapes import visible
from openbot.views.html_css import CSP, CSS
from openbot.views.transcript import (
    Boundary,
    Called,
    Consulted,
    Entry,
    Happened,
    Other,
    Ran,
    Returned,
    Said,
    Spent,
    entries,
)

OUTPUT_EXCERPT_CHARS = 20_000  # a page stays readable; the full output is kept beside the session


def _e(value: object) -> str:
    return html.escape(visible(str(value)), quote=True)


def _json(value: object) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def _num(value: object) -> str:
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else _e(value)


def _cost(value: object) -> str:
    return f"${value:.4f}" if isinstance(value, int | float) and not isinstance(value, bool) else _e(value)


def _duration(secs: object) -> str:
    if not isinstance(secs, int | float) or isinstance(secs, bool):
        return _e(secs)
    minutes, s = divmod(int(round(secs)), 60)
    hours, m = divmod(minutes, 60)
    return f"{hours}h {m:02d}m {s:02d}s" if hours else f"{m}m {s:02d}s" if m else f"{secs:.1f}s"


def _excerpt(text: str) -> str:
    if len(text) <= OUTPUT_EXCERPT_CHARS:
        return text
    return f"{text[:OUTPUT_EXCERPT_CHARS]}\n… {len(text) - OUTPUT_EXCERPT_CHARS:,} more characters not shown"


def _pre(text: object, title: str, open_: bool = False) -> str:
    """A collapsible block of preformatted, escaped text."""
    return (
        f"<details{' open' if open_ else ''}><summary>{_e(title)}</summary>"
        f"<pre>{_e(_excerpt(str(text)))}</pre></details>"
    )


def _tokens(tokens: object) -> str:
    if not isinstance(tokens, Mapping):
        return _num(tokens)
    total = sum(v for v in tokens.values() if isinstance(v, int))
    parts = ", ".join(f"{_e(k)} {_num(v)}" for k, v in tokens.items())
    return f"{total:,} ({parts})"


def _metadata_rows(meta: Mapping[str, object]) -> list[tuple[str, str]]:
    """(label, already-escaped html) for each metadata field that is present."""
    fields: list[tuple[str, str, Callable[[object], str]]] = [
        ("status", "Status", _e),
        ("model", "Model", _e),
        ("branch", "Branch", lambda v: f"<code>{_e(v)}</code>"),
        ("base", "Base", lambda v: f"<code>{_e(v)}</code>"),
        ("started_at", "Started", _e),
        ("duration_secs", "Duration", _duration),
        ("tokens", "Tokens", _tokens),
        ("cost_usd", "Cost", _cost),
        ("command_count", "Commands run", _num),
        ("action", "Action", _e),
        ("prompt_summary", "Task", _e),
        ("response_summary", "Summary", lambda v: f'<div class="text">{_e(v)}</div>'),
        ("summary", "Summary", lambda v: f'<div class="text">{_e(v)}</div>'),
        ("error", "Error", _e),
        ("wip_commit", "WIP commit", lambda v: f"<code>{_e(v)}</code>"),
        ("run_id", "Run", _e),
    ]
    return [
        (label, render(meta[key])) for key, label, render in fields if meta.get(key) not in (None, "", {})
    ]


def _command(e: Ran) -> tuple[str, str]:
    if e.timed_out:
        badge = '<span class="badge bad">timed out</span>'
    elif e.exit_code is None:
        badge = '<span class="badge bad">killed</span>'
    else:
        badge = f'<span class="badge{" bad" if e.failed else ""}">exit {_e(e.exit_code)}</span>'
    body = f"{badge} {_duration(e.seconds)} <code>$ {_e(e.command)}</code>"
    title = f"output ({_num(e.output_bytes)} bytes)" if e.output_bytes is not None else "output"
    body += _pre(e.output, title, open_=e.failed) if e.output else '<div class="label">no output</div>'
    if e.full_output_path:
        body += f'<div class="label">full output: <code>{_e(e.full_output_path)}</code></div>'
    return ("command failed" if e.failed else "command"), body


def _mcp_call(e: Consulted) -> tuple[str, str]:
    badge = f'<span class="badge{" bad" if e.is_error else ""}">{"error" if e.is_error else "ok"}</span>'
    body = f'{badge} {_duration(e.seconds)} <span class="label">MCP</span><code>{_e(e.name)}</code>'
    body += _pre(_json(e.arguments), "arguments")
    title = f"result ({_num(e.output_bytes)} bytes)" if e.output_bytes is not None else "result"
    body += _pre(e.output, title, open_=e.is_error) if e.output else '<div class="label">no output</div>'
    if e.full_output_path:
        body += f'<div class="label">full output: <code>{_e(e.full_output_path)}</code></div>'
    return ("command failed" if e.is_error else "command"), body


def _tool_call(e: Called) -> tuple[str, str]:
    if e.only_a_command:
        return "tool_call", f'<span class="label">shell</span><code>{_e(e.input.get("command", ""))}</code>'
    # The fields that say what the call does go on the line; the whole input stays one click away.
    gist = f"<code>{_e(e.gist[:200])}</code>" if e.gist else ""
    return "tool_call", f'<span class="label">{_e(e.tool)}</span>{gist}{_pre(_json(e.input), "input")}'


def _tool_result(e: Returned) -> tuple[str, str]:
    title = f"{e.tool} result" + (" (error)" if e.is_error else "")
    return ("tool_result err" if e.is_error else "tool_result"), _pre(e.content, title, open_=e.is_error)


def _token_count(e: Spent) -> tuple[str, str]:
    kinds = ", ".join(f"{k.replace('_', ' ')} {_num(v)}" for k, v in e.tokens.items())
    return "tokens", f"tokens: {kinds} · {_cost(e.cost_usd)} · {_e(e.model)}"


def _text(label: str, text: object) -> str:
    return f'<span class="label">{_e(label)}</span><div class="text">{_e(text)}</div>'


def _happened(e: Happened) -> tuple[str, str]:
    if e.kind == "retry":
        return "retry", f'<span class="label">{_e(e.text)}</span>{_e(e.label)}'
    if e.kind == "error":
        return "error", _text(f"error ({e.label})" if e.label else "error", e.text)
    details = _pre(_json(e.data), "details") if e.data else ""
    # openbot's check of the work said no, or the proxy refused a connection
    failed = (e.kind, e.label) in (("verification", "failed"), ("network", "refused"))
    return "error" if failed else "notice", _text(f"{e.kind}: {e.label}", e.text) + details


def _boundary(e: Boundary) -> tuple[str, str]:
    if e.kind == "turn_aborted":
        return "error", _text(f"turn aborted: {e.outcome}", e.detail)
    if e.kind == "session_ended":
        badge = f'<span class="badge{"" if e.outcome == "completed" else " warn"}">{_e(e.outcome)}</span>'
        return "turn", f"session ended · {badge} {_e(e.detail)}"
    if e.kind == "turn_completed":
        return "turn", f"turn completed · {_num(e.steps)} steps · stop reason {_e(e.outcome)}"
    if e.kind == "session_started":
        return "turn", f"session {_e(e.session_id)} started · {_e(e.model)}"
    return "turn", f"turn started · {_e(e.model)}"


def _body(e: Entry) -> tuple[str, str]:
    """The entry's css class and its already-escaped html."""
    match e:
        case Said():
            return (
                ("user_input", _text("you", e.text)) if e.who == "user" else ("message", _text(e.who, e.text))
            )
        case Ran():
            return _command(e)
        case Called():
            return _tool_call(e)
        case Consulted():
            return _mcp_call(e)
        case Returned():
            return _tool_result(e)
        case Spent():
            return _token_count(e)
        case Happened():
            return _happened(e)
        case Boundary():
            return _boundary(e)
        case Other():
            label = e.damage_note if e.damaged else e.type
            return "generic", f'<span class="label">{_e(label)}</span>{_pre(_json(e.fields), "fields")}'
    return "generic", ""


def _entry_html(e: Entry) -> str:
    css, body = _body(e)
    clock = e.ts[11:19] if len(e.ts) >= 19 else e.ts  # the time of day; the date is in the header
    anchor = f' id="e{e.seq}"' if e.seq is not None else ""
    return f'<div class="ev {css}"{anchor}><span class="ts" title="{_e(e.ts)}">{_e(clock)}</span>{body}</div>'


def render_session_html(metadata: Mapping[str, object], events: list[dict[str, object]]) -> str:
    """The whole page; `metadata` is a session's metadata.json, `events` its events.jsonl records."""
    title = f"openbot session {metadata.get('session_id', '')}".strip()
    rows = "".join(
        f"<tr><th>{_e(label)}</th><td>{value}</td></tr>" for label, value in _metadata_rows(metadata)
    )
    listed = list(entries(events))
    # A shell call shows as its command, with its output; the call itself only when the command never
    # finished (a killed run), so nothing is listed twice. Its anchor stays, so links to it still work.
    ran = {x.command for x in listed if isinstance(x, Ran) and x.done}
    transcript = "\n".join(
        f'<a id="e{e.seq}"></a>'
        if isinstance(e, Called) and e.only_a_command and e.input.get("command") in ran
        else _entry_html(e)
        for e in listed
    )
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head><meta charset="utf-8"><title>{_e(title)}</title>'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        # No scripts, no remote loads: a page exported from untrusted text must stay inert.
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        f"<style>{CSS}</style></head><body>\n"
        f'<h1>{_e(title)}</h1>\n<table class="meta">{rows}</table>\n'
        f"<h2>Transcript</h2>\n{transcript or '<p>No events were recorded.</p>'}\n</body></html>\n"
    )


def render_session_dir(session_dir: Path) -> str:
    """Render `<session_dir>/metadata.json` + `events.jsonl`; a missing or damaged metadata.json is shown
    as an error field rather than refused, since the events are what the reader came for."""
    from openbot.files import loads_strict

    path = session_dir / "metadata.json"
    try:
        metadata = loads_strict(path.read_bytes())  # NaN/Infinity too: `int(inf)` would crash a field
        if not isinstance(metadata, dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError) as e:
        why = str(e).splitlines()[0] if str(e) else type(e).__name__
        metadata = {
            "session_id": session_dir.name,
            "error": f"damaged record {path}: {why} (restore or delete it)",
        }
    return render_session_html(metadata, list(read_events(session_dir / "events.jsonl")))


def main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m openbot.views.html", description=__doc__.splitlines()[0])
    parser.add_argument("session_dir", type=Path, help="a session directory (metadata.json, events.jsonl)")
    parser.add_argument("-o", "--output", type=Path, help="write the page here instead of stdout")
    args = parser.parse_args(argv)
    if not args.session_dir.is_dir():
        parser.error(f"{args.session_dir}: not a directory")
    page = render_session_dir(args.session_dir)
    if args.output:
        args.output.write_text(page, encoding="utf-8")
    else:
        sys.stdout.write(page)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
