"""What `openbot digest` reports: every run of this OPENBOT_HOME (or of the run records and `run --json`
summaries named) updated within a window, one row each, with its branch's diffstat when the repository
is reachable and the commands that accept, reject or continue it. The views render the rows.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

from openbot import paths
from openbot.errors import GitError, UsageError

_SINCE = re.compile(r"^(\d+(?:\.\d+)?)\s*([mhdw])$")
_UNITS = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_STAT = re.compile(r"(\d+) files? changed(?:, (\d+) insertions?\(\+\))?(?:, (\d+) deletions?\(-\))?")
FIELDS = ("bot", "project", "run_id", "status", "exit_code", "verified", "branch", "cost_usd", "reason")
# A branch a run of openbot made: `openbot/<name>`, one path component (git/runsdir.py). Only such a
# branch is ever offered to merge or delete: a record names whatever it likes (`main`).
_RUN_BRANCH = re.compile(r"^openbot/(?!.*\.\.)[A-Za-z0-9_][A-Za-z0-9_.-]*$")


def parse_since(text: str) -> float:
    """Seconds in "90m", "24h", "7d", "2w"; UsageError otherwise."""
    m = _SINCE.match(text.strip().lower())
    if not m or float(m.group(1)) <= 0:
        raise UsageError(f"--since {text!r} is not a duration", hint="e.g. --since 24h, 90m, 7d or 2w")
    return float(m.group(1)) * _UNITS[m.group(2)]


def home_records() -> list[Path]:
    return sorted(paths.bots_dir().glob("*/workspaces/*/runs/*/run.json"))


def named_records(sources: Iterable[Path]) -> list[Path]:
    """The JSON files named, and every run.json / result.json below the folders named (CI artifacts)."""
    found: list[Path] = []
    for source in sources:
        if source.is_dir():
            found += sorted(p for p in source.rglob("*.json") if p.name in ("run.json", "result.json"))
        elif source.is_file():
            found.append(source)
        else:
            raise UsageError(
                f"{source}: no such file or directory", hint="name run.json files or directories"
            )
    return found


def collect(files: Iterable[Path], since_secs: float, now: datetime | None = None) -> list[dict[str, object]]:
    """One row per run (its last record when a summary and a run.json both name it), newest first;
    files that are not run records are skipped."""
    cutoff = (now or datetime.now(UTC)).timestamp() - since_secs
    rows: dict[str, dict[str, object]] = {}
    for path in files:
        data = _load(path)
        if data is None or _when(data, path) < cutoff:
            continue
        rows[str(data["run_id"])] = row(data)
    return sorted(rows.values(), key=lambda r: str(r["run_id"]), reverse=True)


def _load(path: Path) -> dict[str, object] | None:
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("run_id"), str) or not data.get("bot"):
        return None
    return data


def _when(data: dict[str, object], path: Path) -> float:
    for key in ("updated_at", "created_at"):
        try:
            return datetime.fromisoformat(str(data[key])).timestamp()
        except (KeyError, ValueError):
            continue
    return path.stat().st_mtime  # a `run --json` summary carries no time: the file's


def _died(d: dict[str, object]) -> bool:
    """A `running` record of this machine whose process is gone (killed, or the machine restarted)."""
    import socket

    from openbot.processes import alive

    pid = d.get("pid")
    here = d.get("host") == socket.gethostname()
    return d.get("status") == "running" and here and isinstance(pid, int) and pid > 0 and not alive(pid)


def row(d: dict[str, object]) -> dict[str, object]:
    r: dict[str, object] = {k: d.get(k) for k in FIELDS}
    if _died(d):
        r["status"], r["reason"] = (
            "died",
            "its process is gone; the next run in this repository saves its work",
        )
    r["cost_known"] = d.get("cost_known", True) is not False
    r["cost_usd"] = r["cost_usd"] if isinstance(r["cost_usd"], int | float) else 0.0
    r["summary"] = str(d.get("summary") or "")
    r["action"] = str(d.get("action") or "")
    r["pr_url"] = str(d.get("pr_url") or "")
    found = d.get("feedback")  # --feedback (run/feedback.py): how many of its items the bot addressed
    fb = found if isinstance(found, dict) else {}
    said = f"{fb.get('addressed')} of {fb.get('total')} feedback item(s) addressed"
    r["feedback"] = said if fb.get("total") else ""
    r["feedback_left"] = _not_addressed(fb.get("items"))
    repo = Path(str(d["repo_root"])) if d.get("repo_root") else None
    r["repo"] = str(repo) if repo else ""
    r["network"] = _network(d.get("network"))
    branch = str(d.get("branch") or "")
    alive = repo is not None and branch != "" and _has_branch(repo, branch)
    r["diffstat"] = d.get("diffstat") or (
        _diffstat(repo, str(d.get("base_commit") or ""), branch) if alive and repo else None
    )
    r["commands"] = next_commands(r, repo, alive)
    return r


def _network(value: object) -> dict[str, int]:
    """The run's connections through its proxies (netevent.py): allowed, refused, bytes each way."""
    from openbot.netevent import COUNTS

    given = value if isinstance(value, dict) else {}
    return {k: n if isinstance(n := given.get(k), int) and n >= 0 else 0 for k in COUNTS}


def _git(repo: Path, *args: str) -> str | None:
    from openbot.git.gitcmd import run_bounded

    try:
        proc = run_bounded(["git", "-C", str(repo), *args], cwd=repo, timeout=30)
    except (GitError, OSError):
        return None
    return proc.stdout.decode(errors="replace") if proc.returncode == 0 else None


def _has_branch(repo: Path, branch: str) -> bool:
    return repo.is_dir() and _git(repo, "rev-parse", "--verify", "-q", f"refs/heads/{branch}") is not None


def _diffstat(repo: Path, base: str, branch: str) -> dict[str, int] | None:
    out = _git(repo, "diff", "--shortstat", f"{base or 'HEAD'}...refs/heads/{branch}")
    if out is None:
        return None
    m = _STAT.search(out)
    files, plus, minus = (int(g or 0) for g in m.groups()) if m else (0, 0, 0)
    return {"files": files, "insertions": plus, "deletions": minus}


def next_commands(r: dict[str, object], repo: Path | None, alive: bool) -> dict[str, str]:
    """accept (merge the branch), reject (delete it), continue (resume the run): those that apply.

    A record is data anyone can write (a CI artifact, a crafted file): every value in a command is
    shell-quoted, only a branch of openbot's own (`openbot/<name>`) is offered to merge or delete, and
    only a run id of openbot's format to resume."""
    from openbot.state.runstate import RUN_ID_RE

    status, action, branch = r["status"], r["action"], str(r["branch"] or "")
    out: dict[str, str] = {}
    if action in ("merge", "discard") and status == "completed":
        return out  # already applied
    git = f"git -C {shlex.quote(str(repo))}" if repo else "git"
    ours = alive and _RUN_BRANCH.match(branch) is not None
    if ours and status == "completed" and r["verified"] is not False:
        out["accept"] = f"{git} merge --no-overwrite-ignore {shlex.quote(branch)}"
    if ours:
        out["reject"] = f"{git} branch -D {shlex.quote(branch)}"
    run_id = str(r["run_id"])
    if status not in ("completed", "running") and action != "discard" and RUN_ID_RE.match(run_id):
        cd = f"cd {shlex.quote(str(repo))} && " if repo else ""  # "died" goes on; no id, no resume
        out["continue"] = f"{cd}openbot run {shlex.quote(str(r['bot']))} --resume {shlex.quote(run_id)}"
    return out


LEFT_SHOWN, LEFT_CHARS = 5, 160  # the items not addressed a digest row names, and each one's length


def _not_addressed(items: object) -> list[str]:
    """`F3 comment by "bob": printing is out of scope` per item the bot did not address: the first
    LEFT_SHOWN, each cut to LEFT_CHARS, the rest counted (the row stays a row)."""
    left = [
        i
        for i in (items if isinstance(items, list) else [])
        if isinstance(i, dict) and i.get("addressed") is not True
    ]
    said = [
        f"{i.get('id')} {i.get('title') or ''}".strip() + (f": {i['how']}" if i.get("how") else "")
        for i in left
    ]
    shown = [" ".join(line.split())[:LEFT_CHARS] for line in said[:LEFT_SHOWN]]
    return shown + ([f"and {len(said) - LEFT_SHOWN} more"] if len(said) > LEFT_SHOWN else [])
