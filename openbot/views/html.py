"""One session as one self-contained HTML page: metadata on top, the transcript below.

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
from typing import Any

from openbot.events import read_events
from openbot.views.escapes import visible

OUTPUT_EXCERPT_CHARS = 20_000  # a page stays readable; the full output is kept beside the session

_CSP = "default-src 'none'; style-src 'unsafe-inline'"
_CSS = """
body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1000px;padding:1.5em;
color:#1d2330;background:#fff}
h1{font-size:1.4em;margin:.2em 0 .6em}
table.meta{border-collapse:collapse;margin-bottom:1.5em}
table.meta th{text-align:left;padding:.2em 1em .2em 0;color:#5a6270;font-weight:600;vertical-align:top}
table.meta td{padding:.2em 0}
.ev{border-left:3px solid #d0d5dd;margin:.5em 0;padding:.3em .8em}
.ts{float:right;color:#8a919c;font-size:.8em}
.label{font-weight:600;color:#5a6270;margin-right:.4em}
.message{border-color:#3b6fd4}.user_input{border-color:#8b4fc4;background:#f7f2fc}
.tool_call{border-color:#7a8799}.command{border-color:#2e8b57}.command.failed{border-color:#c0392b}
.tool_result.err,.error{border-color:#c0392b;background:#fdf0ee}
.notice,.retry{border-color:#d4a017;background:#fdf8e8}
.turn{border:0;border-top:1px dashed #d0d5dd;color:#8a919c;font-size:.85em;margin-top:1.2em}
.tokens{border-color:transparent;color:#8a919c;font-size:.8em;padding:0 .8em}
.text{white-space:pre-wrap;overflow-wrap:anywhere}
pre{background:#f4f5f7;padding:.6em;overflow-x:auto;white-space:pre-wrap;overflow-wrap:anywhere;margin:.3em 0}
code{background:#f4f5f7;padding:0 .25em}
.badge{display:inline-block;border-radius:3px;padding:0 .4em;font-size:.85em;color:#fff;background:#2e8b57}
.badge.bad{background:#c0392b}.badge.warn{background:#b8860b}
summary{cursor:pointer;color:#5a6270}
@media (prefers-color-scheme:dark){body{background:#15181e;color:#dde1e7}pre,code{background:#232832}
.user_input{background:#231c2c}.tool_result.err,.error{background:#2c1a1a}.notice,.retry{background:#2a2515}}
"""


def _e(value: Any) -> str:
    return html.escape(visible(str(value)), quote=True)


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def _num(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else _e(value)


def _cost(value: Any) -> str:
    return f"${value:.4f}" if isinstance(value, int | float) and not isinstance(value, bool) else _e(value)


def _duration(secs: Any) -> str:
    if not isinstance(secs, int | float) or isinstance(secs, bool):
        return _e(secs)
    minutes, s = divmod(int(round(secs)), 60)
    hours, m = divmod(minutes, 60)
    return f"{hours}h {m:02d}m {s:02d}s" if hours else f"{m}m {s:02d}s" if m else f"{secs:.1f}s"


def _excerpt(text: str) -> str:
    if len(text) <= OUTPUT_EXCERPT_CHARS:
        return text
    return f"{text[:OUTPUT_EXCERPT_CHARS]}\n… {len(text) - OUTPUT_EXCERPT_CHARS:,} more characters not shown"


def _pre(text: Any, title: str, open_: bool = False) -> str:
    """A collapsible block of preformatted, escaped text."""
    return (
        f"<details{' open' if open_ else ''}><summary>{_e(title)}</summary>"
        f"<pre>{_e(_excerpt(str(text)))}</pre></details>"
    )


def _tokens(tokens: Any) -> str:
    if not isinstance(tokens, Mapping):
        return _num(tokens)
    total = sum(v for v in tokens.values() if isinstance(v, int))
    parts = ", ".join(f"{_e(k)} {_num(v)}" for k, v in tokens.items())
    return f"{total:,} ({parts})"


def _metadata_rows(meta: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(label, already-escaped html) for each metadata field that is present."""
    fields: list[tuple[str, str, Callable[[Any], str]]] = [
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


def _command(ev: Mapping[str, Any]) -> tuple[str, str]:
    code, timed_out = ev.get("exit_code"), ev.get("timed_out")
    failed = timed_out or code != 0
    if timed_out:
        badge = '<span class="badge bad">timed out</span>'
    elif code is None:
        badge = '<span class="badge bad">killed</span>'
    else:
        badge = f'<span class="badge{" bad" if failed else ""}">exit {_e(code)}</span>'
    ms = ev.get("duration_ms")
    took = f" {_duration(ms / 1000)}" if isinstance(ms, int | float) else ""
    body = f"{badge}{took} <code>$ {_e(ev.get('command', ''))}</code>"
    size = ev.get("output_bytes")
    title = f"output ({_num(size)} bytes)" if isinstance(size, int) else "output"
    output = ev.get("output") or ""
    body += _pre(output, title, open_=bool(failed)) if output else '<div class="label">no output</div>'
    if ev.get("full_output_path"):
        body += f'<div class="label">full output: <code>{_e(ev["full_output_path"])}</code></div>'
    return ("command failed" if failed else "command"), body


_GIST_KEYS = ("command", "action", "path", "key")


def _tool_call(ev: Mapping[str, Any]) -> tuple[str, str]:
    name, args = ev.get("name", ""), ev.get("input") or {}
    if name == "shell" and isinstance(args, Mapping) and set(args) <= {"command", "timeout_secs"}:
        return "tool_call", f'<span class="label">shell</span><code>{_e(args.get("command", ""))}</code>'
    # The fields that say what the call does go on the line; the whole input stays one click away.
    gist = " ".join(
        str(args[k]) for k in _GIST_KEYS if isinstance(args, Mapping) and isinstance(args.get(k), str)
    )
    gist_html = f"<code>{_e(gist[:200])}</code>" if gist else ""
    return "tool_call", f'<span class="label">{_e(name)}</span>{gist_html}{_pre(_json(args), "input")}'


def _tool_result(ev: Mapping[str, Any]) -> tuple[str, str]:
    err = bool(ev.get("is_error"))
    title = f"{ev.get('name', '')} result" + (" (error)" if err else "")
    return ("tool_result err" if err else "tool_result"), _pre(ev.get("content", ""), title, open_=err)


def _token_count(ev: Mapping[str, Any]) -> tuple[str, str]:
    kinds = ", ".join(
        f"{k.replace('_', ' ')} {_num(ev.get(k, 0))}"
        for k in ("input", "output", "cache_read", "cache_write")
    )
    return "tokens", f"tokens: {kinds} · {_cost(ev.get('cost_usd', 0))} · {_e(ev.get('model', ''))}"


def _generic(ev: Mapping[str, Any]) -> tuple[str, str]:
    fields = {k: v for k, v in ev.items() if k not in ("type", "ts", "seq")}
    return (
        "generic",
        f'<span class="label">{_e(ev.get("type", "event"))}</span>{_pre(_json(fields), "fields")}',
    )


def _text(label: str, text: Any) -> str:
    return f'<span class="label">{_e(label)}</span><div class="text">{_e(text)}</div>'


_RENDERERS: dict[str, Callable[[Mapping[str, Any]], tuple[str, str]]] = {
    "message": lambda ev: ("message", _text(ev.get("role", "assistant"), ev.get("text", ""))),
    "user_input": lambda ev: ("user_input", _text("you", ev.get("text", ""))),
    "tool_call": _tool_call,
    "command": _command,
    "tool_result": _tool_result,
    "token_count": _token_count,
    "retry": lambda ev: (
        "retry",
        f'<span class="label">retry {_e(ev.get("attempt"))}</span>{_e(ev.get("cause", ""))}'
        f" · waiting {_e(ev.get('wait_secs'))}s",
    ),
    "error": lambda ev: (
        "error",
        _text(f"error ({ev['kind']})" if ev.get("kind") else "error", ev.get("message", "")),
    ),
    "notice": lambda ev: (
        "notice",
        _text(f"notice: {ev.get('kind', '')}", ev.get("message", ""))
        + (_pre(_json(ev["data"]), "details") if ev.get("data") else ""),
    ),
    "turn_started": lambda ev: ("turn", f"turn started · {_e(ev.get('model', ''))}"),
    "turn_completed": lambda ev: (
        "turn",
        f"turn completed · {_num(ev.get('steps'))} steps · stop reason {_e(ev.get('stop_reason', ''))}",
    ),
    "turn_aborted": lambda ev: (
        "error",
        _text(f"turn aborted: {ev.get('reason', '')}", ev.get("detail", "")),
    ),
    "session_started": lambda ev: (
        "turn",
        f"session {_e(ev.get('session_id', ''))} started · {_e(ev.get('model', ''))}",
    ),
    "session_ended": lambda ev: (
        "turn",
        f'session ended · <span class="badge{"" if ev.get("status") == "completed" else " warn"}">'
        f"{_e(ev.get('status', ''))}</span> {_e(ev.get('reason', ''))}",
    ),
}


def _event_html(ev: Mapping[str, Any]) -> str:
    css, body = _RENDERERS.get(str(ev.get("type")), _generic)(ev)
    ts = str(ev.get("ts", ""))
    clock = ts[11:19] if len(ts) >= 19 else ts  # the time of day; the date is in the header
    seq = ev.get("seq")
    anchor = f' id="e{seq}"' if isinstance(seq, int) else ""
    return f'<div class="ev {css}"{anchor}><span class="ts" title="{_e(ts)}">{_e(clock)}</span>{body}</div>'


def render_session_html(metadata: Mapping[str, Any], events: list[dict[str, Any]]) -> str:
    """The whole page; `metadata` is a session's metadata.json, `events` its events.jsonl records."""
    title = f"openbot session {metadata.get('session_id', '')}".strip()
    rows = "".join(
        f"<tr><th>{_e(label)}</th><td>{value}</td></tr>" for label, value in _metadata_rows(metadata)
    )
    transcript = "\n".join(_event_html(ev) for ev in events if isinstance(ev, Mapping))
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head><meta charset="utf-8"><title>{_e(title)}</title>'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        # No scripts, no remote loads: a page exported from untrusted text must stay inert.
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
        f"<style>{_CSS}</style></head><body>\n"
        f'<h1>{_e(title)}</h1>\n<table class="meta">{rows}</table>\n'
        f"<h2>Transcript</h2>\n{transcript or '<p>No events were recorded.</p>'}\n</body></html>\n"
    )


def render_session_dir(session_dir: Path) -> str:
    """Render `<session_dir>/metadata.json` + `events.jsonl`; a missing or damaged metadata.json is shown
    as an error field rather than refused, since the events are what the reader came for."""
    try:
        metadata = json.loads((session_dir / "metadata.json").read_text(encoding="utf-8"))
        if not isinstance(metadata, dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError) as e:
        metadata = {"session_id": session_dir.name, "error": f"metadata.json unreadable: {e}"}
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
