"""The body of a bot's nightly pull request, from its run's `--json` result (the reusable workflow's PR step):

    python -m openbot.views.prbody RESULT_JSON BRANCH RUN_URL > pr-body.md

openbot's own lines come first, one paragraph each: how the run ended, whether openbot verified the work,
the run's figures, the branch. The bot's summary comes last, labelled as its words, in a fenced block
whose fence is longer than any backtick run in it: no markup in the summary (`<!--`, a closing fence, a
forged "Verified by openbot" line) can hide, close or imitate what openbot says. The reasons quoted in
openbot's lines are the run's, which may echo the agent (a check's output): flattened to one line, with
raw HTML and images neutralised outside their code spans.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping
from typing import Any

from openbot.views.ci_summary import code, prose
from openbot.views.escapes import visible

SUMMARY_MAX = 20_000  # characters; GitHub refuses a body over 65,536


def pr_body(result: Mapping[str, Any], branch: str, run_url: str) -> str:
    status = str(result.get("status") or "unknown")
    if status == "completed":
        ended = "The bot completed its run." + (
            " Nothing changed in the repository." if result.get("nothing_changed") is True else ""
        )
    else:
        ended = f"**A draft**: the run ended {code(status)}: {_inline(result.get('reason'))}."
    lines = [
        ended,
        _verified(result) + _reviewed(result),
        f"Bot {code(result.get('bot') or '?')}, run {code(result.get('run_id') or '?')}: "
        f"{_number(result.get('iterations'))} iteration(s), {_tokens(result.get('tokens'))} tokens, "
        f"${_number(result.get('cost_usd'))}.",
        f"Branch {code(branch)} is updated in place each night. Workflow run and session history: "
        f"{_inline(run_url)}",
        *_feedback(result),
        "---",
        "**The bot's summary**, in its own words (openbot checked only what is said above):",
        _fenced(str(result.get("summary") or "") or "(no summary)"),
    ]
    return "\n\n".join(lines) + "\n"


def _reviewed(result: Mapping[str, Any]) -> str:
    """The bot's review of the verified work (docs/VERIFY.md, "Review"); "" without one."""
    found = result.get("review")
    review: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    said = f"{_number(review.get('attempt'))} review(s) by {code(review.get('model') or '?')}"
    if result.get("reviewed") is True:
        return f" Approved by its review model after {said}."
    return f" **Not approved by its review model** after {said}." if result.get("reviewed") is False else ""


def _feedback(result: Mapping[str, Any]) -> list[str]:
    """The "Feedback" section (docs/ci.md): each item of the night's --feedback, addressed or not, with its
    commits and the bot's words in code spans; [] for a run without feedback."""
    found = result.get("feedback")
    fb: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    items = [i for i in fb.get("items") or [] if isinstance(i, Mapping)]
    if not items:
        return []
    ignored = fb.get("ignored")
    aside = f"; {_number(ignored)} left aside (not from people with write access)" if ignored else ""
    head = (
        f"**Feedback**: this run was given {len(items)} item(s) from this pull request's checks and reviews"
        f"{aside}; the bot says it addressed {_number(fb.get('addressed'))} of {len(items)}:"
    )
    lines = []
    for item in items:
        commits = [str(c)[:12] for c in item.get("commits") or [] if isinstance(c, str)]
        said = "addressed" if item.get("addressed") is True else "**not addressed**"
        where = f" in {', '.join(code(c) for c in commits)}" if commits else ""
        how = f": {code(item.get('how'))}" if item.get("how") else ""
        lines.append(f"- {code(item.get('id'))} {code(item.get('title'))}: {said}{where}{how}")
    return [head, "\n".join(lines)]


def _verified(result: Mapping[str, Any]) -> str:
    if result.get("verified") is True:
        sha = str(result.get("verified_sha") or "")[:12]
        return f"Verified by openbot: every check passed at {code(sha)}."
    if result.get("verified") is False:
        verification = result.get("verification")
        reason = verification.get("reason") if isinstance(verification, Mapping) else None
        return f"**Not verified**: {_inline(reason or 'the check failed')}."
    return (
        "Not verified: nothing checked the work (the bot declares no `verify` commands and the repository "
        "has no evident test command, or its config says `verify = []`)."
    )


def _inline(value: object) -> str:
    return prose(visible(" ".join(str(value or "").split())))


def _number(value: object) -> str:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    return str(value) if ok else "?"


def _tokens(tokens: object) -> str:
    if isinstance(tokens, Mapping):
        return str(sum(v for v in tokens.values() if isinstance(v, int) and not isinstance(v, bool)))
    return _number(tokens) if tokens is not None else "0"


def _fenced(text: str) -> str:
    text = visible(text).rstrip()
    if len(text) > SUMMARY_MAX:
        text = text[:SUMMARY_MAX] + f"\n… ({len(text) - SUMMARY_MAX:,} characters more in the run's record)"
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}"


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: python -m openbot.views.prbody RESULT_JSON BRANCH RUN_URL", file=sys.stderr)
        return 2
    try:
        with open(argv[0], encoding="utf-8") as f:
            result = json.load(f)
    except (OSError, ValueError) as e:
        print(f"{argv[0]}: not a run's --json result ({e})", file=sys.stderr)
        return 2
    if not isinstance(result, dict):
        print(f"{argv[0]}: not a run's --json result (a JSON object is expected)", file=sys.stderr)
        return 2
    sys.stdout.write(pr_body(result, argv[1], argv[2]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
