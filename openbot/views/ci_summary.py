"""Running under CI: detect it, and render a run's `--json` result as a GitHub Actions step summary.

The summary is what a maintainer reads the morning after a nightly run, so it answers at a glance:
did it finish, where is the work (branch), what did it cost, what should I do (action, resume command).
Every value is model- or user-derived text: control characters are shown (`\x1b`), table cells are escaped
for markdown, and raw HTML and images are neutralised everywhere but inside code spans (which are inert).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from openbot.views.escapes import visible
from openbot.views.fields import verified_text

_TRUE = ("true", "1", "yes")
_STATUS_ICON = {0: "✅", 3: "⚠️"}  # exit codes: 0 completed, 3 stopped at a limit; anything else failed
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`).+?(?<!`)\1(?!`)")


def in_ci(environ: Mapping[str, str]) -> bool:
    """True on a CI runner (`CI=true`, set by most CI systems, or `GITHUB_ACTIONS=true`)."""
    return any(environ.get(name, "").strip().lower() in _TRUE for name in ("CI", "GITHUB_ACTIONS"))


def _inert(text: str) -> str:
    """Markdown text with no raw HTML (a tag, a comment, an autolink) and no image to load."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("![", "!\\[")


def prose(line: str) -> str:
    """One line of the bot's own markdown: readable, but inert outside its code spans."""
    out, pos = [], 0
    for span in _CODE_SPAN.finditer(line):
        out += [_inert(line[pos : span.start()]), span.group()]
        pos = span.end()
    return "".join([*out, _inert(line[pos:])])


def cell(value: object) -> str:
    """One markdown table cell: pipes escaped, newlines flattened, never empty."""
    text = visible(" ".join(str(value).split())) if value not in (None, "") else "—"
    return _inert(text.replace("\\", "\\\\").replace("|", "\\|"))


def code(value: object) -> str:
    """Inline code that survives backticks inside the value (a longer fence, as CommonMark allows)."""
    text = visible(" ".join(str(value).split())).replace("|", "\\|")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if longest else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _tokens(tokens: object) -> str:
    if isinstance(tokens, Mapping):
        total = sum(v for v in tokens.values() if isinstance(v, int))
        parts = ", ".join(
            f"{k.replace('_', ' ')} {v:,}" for k, v in tokens.items() if isinstance(v, int) and v
        )
        return f"{total:,} ({parts})" if parts else f"{total:,}"
    if isinstance(tokens, int):
        return f"{tokens:,}"
    return cell(tokens)


def cost(cost: object) -> str:
    if isinstance(cost, int | float) and not isinstance(cost, bool):
        return f"${cost:.2f}" if cost >= 0.01 or cost == 0 else f"${cost:.4f}"
    return cell(cost)


def step_summary_markdown(result: Mapping[str, Any]) -> str:
    """The run's `--json` object as a heading, a table, the bot's own summary and how to resume."""
    exit_code = result.get("exit_code")
    icon = _STATUS_ICON.get(exit_code, "❌") if isinstance(exit_code, int) else "❔"
    status = result.get("status") or "unknown"
    bot = result.get("bot") or "?"
    lines = [f"### {icon} openbot {code(bot)}: {cell(status)}", "", "| | |", "|---|---|"]

    def row(name: str, value: str) -> None:
        lines.append(f"| {name} | {value} |")

    reason = f": {cell(result['reason'])}" if result.get("reason") else ""
    row("Status", f"{cell(status)}{reason} (exit code {cell(exit_code)})")
    branch, base = result.get("branch"), result.get("base")
    if branch:
        row("Branch", code(branch) + (f" from {code(base)}" if base else ""))
    row("Iterations", cell(result.get("iterations")))
    if "command_count" in result:
        row("Commands run", cell(result.get("command_count")))
    row("Tokens", _tokens(result.get("tokens")))
    row("Cost", cost(result.get("cost_usd")) if result.get("cost_known") is not False else "?")
    if verified_text(result):
        row("Verified", cell(verified_text(result)))
    action_message = f" — {cell(result['action_message'])}" if result.get("action_message") else ""
    row("Action", cell(result.get("action")) + action_message)
    if result.get("run_id"):
        row("Run", code(result["run_id"]))
    sessions = result.get("session_ids") or []
    if sessions:
        row("Sessions", ", ".join(code(s) for s in sessions))

    summary = visible(str(result.get("summary") or "")).strip()
    lines += ["", "**Summary**", ""]
    # A blockquote keeps the bot's markdown readable while making clear whose words these are.
    lines += (
        [f"> {prose(line)}" if line.strip() else ">" for line in summary.split("\n")]
        if summary
        else ["_none_"]
    )
    if result.get("resume_command"):
        command = visible(str(result["resume_command"])).strip()
        fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", command)), default=0))
        lines += ["", "Continue this run:", "", f"{fence}sh", command, fence]
    return "\n".join(lines) + "\n"


def write_step_summary(result: Mapping[str, object], environ: Mapping[str, str]) -> bool:
    """Append the summary to `$GITHUB_STEP_SUMMARY`; False when it is unset or cannot be written.

    A summary that cannot be written must not fail a run whose work is already done, so OSError is
    reported by the return value, not raised."""
    path = environ.get("GITHUB_STEP_SUMMARY", "")
    if not path:
        return False
    try:
        with open(path, "a", encoding="utf-8") as f:
            f.write(step_summary_markdown(result) + "\n")
    except OSError:
        return False
    return True
