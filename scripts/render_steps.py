"""Write docs/SANDBOX.md's table of every process openbot starts: `openbot.gate.table()`, between the
`<!-- gate-steps -->` and `<!-- /gate-steps -->` markers.

    python scripts/render_steps.py           # rewrite the table
    python scripts/render_steps.py --check   # exit 1 when the document's table is not the gate's list

Run it after declaring or changing a step in openbot/gate.py (tests/test_gate.py fails until then).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from openbot import gate  # noqa: E402

DOC = ROOT / "docs" / "SANDBOX.md"
START, END = "<!-- gate-steps -->\n", "<!-- /gate-steps -->\n"


def rendered(text: str) -> str:
    """`text` with the table between the markers replaced by the gate's (ValueError: no markers)."""
    head, start, rest = text.partition(START)
    _, end, tail = rest.partition(END)
    if not start or not end:
        raise ValueError(f"the markers {START.strip()} and {END.strip()} are not both in the document")
    return head + START + gate.table() + END + tail


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the table is out of date")
    args = parser.parse_args()
    text = DOC.read_text(encoding="utf-8")
    new = rendered(text)
    if args.check:
        if new != text:
            print(f"{DOC}: the table of steps is not openbot/gate.py's: run scripts/render_steps.py")
            return 1
        return 0
    DOC.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
