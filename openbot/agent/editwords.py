"""What work_mode "edits" says to the model (agent/editmode.py): the format, the check's failure, and
the asks after a reply that did not move it — each worded after what a 1.5B model did with the one before.
"""

from __future__ import annotations

FORMAT = """\
Your reply held no edit and no command, so nothing changed. To change a file, write its path on a line \
of its own, then the whole new file in a fenced block:

calc.py
```python
def add(a, b):
    return a + b
```

To run a command, write it in a ```sh block. When the task is done, reply DONE."""
NOTHING_YET = "[openbot] You said DONE, but no file has changed yet. "
SAME = "already so"
AGAIN = "Send that file again, whole: the old lines that should stay and yours."
CUT = "the reply was cut at its length limit: the files whose blocks closed in it are applied"
FAILED = "[openbot] the check "
NOW = "Before any change, the check "
FIX = "Fix it: reply with the corrected file(s)."
# a .pyc a check wrote before an edit in the same second, of the same size, would be taken as current
# (X = 4 → X = 5): every check runs without writing them
NO_PYC = "export PYTHONDONTWRITEBYTECODE=1\n"
BEFORE_TAIL = 1_200  # the first message's share: ~300 tokens, ~8 s of a small local model's reading
UNCHANGED = (
    "[openbot] What you sent is the file as it is now: nothing changed, and the check still fails.\n{}\n"
)
CHANGE_LINES = (
    "Change the lines that make it fail: write the file's path, then only those lines as <<<<<<< SEARCH "
    "(the lines now in the file) ======= (the new lines) >>>>>>> REPLACE."
)
CHANGE_FUNCTION = (
    "Change it: write {path} on a line of its own, then `{name}` alone, whole, with your change, in a fenced "
    "block (openbot puts it in place of the old one)."
)
CHANGE_EXCERPT = (
    "Fix line {line}, where the error is: write {path} on a line of its own, then these lines with your "
    "change, in a fenced block (openbot puts them in place of lines {start}-{end})."
)
PUT = "lines {}-{} put in place"
NARROW = (
    "[openbot] The check still fails on the same line:\n"
    '  File "{path}", line {line}{name}\n    {code}\n{error}\n\n'
    "{lines}\n\n# Task\n{task}\n\n{ask}\n"
)
REPEATED = "[openbot] That reply is the same as your last one, and changes nothing: write it differently."
ASK_DONE = "If the task needs more changes, send them the same way; if it is done, reply DONE."
BACK_COMMIT = "Put back the files as they were before this session's edits"
