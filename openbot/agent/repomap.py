"""The files a task is likely about when it names none (work_mode "edits"): the checkout's text files
ranked by the task's words, so that the first message can show them, within its budget.

    terms      the task's identifiers (`user_function`, `cachetools.func`: a dotted name is also a path)
               and words of four letters or more, each cut to a stem (`pickling` → `pickl`)
    a file's   for each term found in it (as a word start, any case): log(files / files with it) — a
    score      word most files hold says nothing; a term that is the file's name or module path: 3 times
               as much. Tests count half: the code to change is what is shown first
"""

from __future__ import annotations

import math
import re
from pathlib import Path, PurePosixPath

from openbot.files import read_text_capped

MAX_FILES = 300  # files read to rank them
MAX_BYTES = 64 * 1024  # a larger file is not ranked (a data file, a vendored module)
SOURCE = {".py", ".js", ".ts", ".go", ".rs", ".rb", ".java", ".c", ".h", ".cpp", ".sh", ".toml", ".cfg"}
_WORD = re.compile(r"[A-Za-z_][\w.]*[A-Za-z0-9_]")
_SUFFIXES = ("ing", "ed", "es", "s", "al")
STOP = set(
    "able about above after again also allow because been before being below between both but cannot "
    "change changed changes could does doing done down each else every file files first from have into "
    "just like make more most must need only other over same should since some such than that their them "
    "then there these they this those through under until using very were what when where which while "
    "will with within without would your case fix fixed fixes support supports issue work works".split()
)


def terms(task: str) -> list[str]:
    """The task's terms, each once: identifiers and dotted names whole, words by their stem."""
    out: list[str] = []
    for word in _WORD.findall(task):
        word = word.strip(".").lower()
        if "." in word:  # a dotted name: itself (a module path), then its parts
            out += [t for t in [word, *(p for p in word.split(".") if len(p) >= 4)] if t not in out]
            continue
        if "_" in word:
            term = word
        elif len(word) < 4 or word in STOP:
            continue
        else:
            term = next(
                (word[: -len(s)] for s in _SUFFIXES if word.endswith(s) and len(word) - len(s) >= 4), word
            )
        if term not in out:
            out.append(term)
    return out[:40]


def relevant(task: str, root: Path, files: set[str], limit: int = 4) -> list[str]:
    """Up to `limit` files of `files` the task's words point at, best first; [] when none stands out."""
    wanted = terms(task)
    texts = {f: _text(root, f) for f in sorted(files)[:MAX_FILES] if PurePosixPath(f).suffix in SOURCE}
    texts = {f: t.lower() for f, t in texts.items() if t}
    if not wanted or not texts:
        return []
    found = {t: {f for f, text in texts.items() if _has(text, t)} for t in wanted}
    scores: dict[str, float] = {}
    for f in texts:
        score = 0.0
        for term, where in found.items():
            weight = math.log((len(texts) + 1) / (len(where) + 1)) if where else 0.0
            if f in where:
                score += weight
            if _names(f, term):
                score += 3 * max(weight, 1.0)
        scores[f] = score / 2 if is_test(f) else score
    ranked = sorted((s, f) for f, s in scores.items() if s > 0)
    ranked.reverse()
    return [f for s, f in ranked[:limit] if s >= ranked[0][0] / 3]


def _has(text: str, term: str) -> bool:
    return re.search(r"(?<![\w])" + re.escape(term), text) is not None


def _names(path: str, term: str) -> bool:
    """The term is the file's name (`keys` for keys.py) or its module path (`cachetools.func`)."""
    p = PurePosixPath(path)
    module = ".".join([*p.parent.parts, p.stem]).lower()
    return p.stem.lower() == term or module.endswith(term) and "." in term


def is_test(path: str) -> bool:
    p = PurePosixPath(path)
    return (
        p.name.startswith("test") or p.stem.endswith("_test") or any(d in ("tests", "test") for d in p.parts)
    )


def _text(root: Path, rel: str) -> str:
    try:
        if (root / rel).lstat().st_size > MAX_BYTES:
            return ""
        text, _ = read_text_capped(root / rel, root=root, limit=MAX_BYTES)
    except Exception:  # a link out, a FIFO, not UTF-8: not ranked
        return ""
    return "" if "\0" in text else text
