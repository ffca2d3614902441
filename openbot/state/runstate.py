"""The record of one run (`runs/<run_id>/run.json`) and finding it again for `--resume`."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import secrets
import shutil
import socket
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, get_args

from openbot import paths
from openbot.errors import ConfigError, NotFoundError, UsageError
from openbot.files import loads_strict
from openbot.state.records import write_record
from openbot.stops import Status

RUN_ID_RE = re.compile(r"^\d{8}T\d{6}Z-[0-9a-f]{4,32}$")
_SHA_RE = re.compile(r"^([0-9a-f]{40}|[0-9a-f]{64})$")
STATUSES: tuple[str, ...] = get_args(Status)  # every status a run.json may hold


def new_run_id() -> str:
    """Sortable and unique even for two runs started in the same second."""
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(2)


def check_run_id(run_id: str) -> str:
    """Only openbot's own format: a run id becomes a path and a glob, so `../x` or `*` must never pass."""
    if not RUN_ID_RE.match(run_id):
        raise UsageError(
            f"invalid run id {run_id!r}",
            hint="run ids look like 20261122T101500Z-3fa2; `openbot history <bot>` lists the runs",
        )
    return run_id


@dataclass
class RunRecord:
    run_id: str
    bot: str = ""  # the defaults let a hand-edited or partial record still be read
    project: str = ""
    model: str = ""
    status: str = "running"
    exit_code: int | None = None
    branch: str = ""
    base: str = ""
    base_commit: str = ""
    workdir: str = ""
    use_worktree: bool = True
    iterations: int = 0
    session_ids: list[str] = field(default_factory=list)
    created_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    updated_at: str = ""
    pid: int = field(default_factory=os.getpid)
    host: str = field(default_factory=socket.gethostname)
    summary: str = ""
    action: str = ""
    action_message: str = ""
    reason: str = ""
    wip_commits: list[str] = field(default_factory=list)
    empty_branch_deleted: bool = False  # the run ended without commits; a resume recreates the branch
    tmp_dir: str = ""
    command_count: int = 0
    tokens: dict[str, int] = field(default_factory=dict)
    cost_usd: float = 0.0
    cost_known: bool = True  # False once any call was priced without a known price
    # openbot's own check of the work (run/verify.py): None = nothing verified it (no verify commands)
    verified: bool | None = None
    verified_sha: str = ""  # the commit the last passing verification checked out
    verification: dict[str, object] = field(default_factory=dict)  # the last verification, as its event says
    reviewed: bool | None = None  # the `review` model's last verdict (run/review.py); None = no review
    review: dict[str, object] = field(default_factory=dict)  # the last review, as its event says
    feedback: dict[str, object] = field(default_factory=dict)  # --feedback: each item, addressed or not
    merge_unverified: bool = False  # the bot lets `merge` apply to unverified work
    nothing_changed: bool = False  # it completed with the repository as it found it (run/unchanged.py)
    repo_root: str = ""  # the user's checkout the run started from ("" outside a repository): the digest
    # connections through its proxies (netevent.py): allowed, refused, bytes_sent, bytes_received
    network: dict[str, int] = field(default_factory=dict)

    @property
    def dir(self) -> Path:
        return paths.runs_dir(self.bot, self.project) / self.run_id

    @property
    def conversation_path(self) -> Path:
        return self.dir / "conversation.jsonl"

    def save(self, *, final: bool = False) -> None:
        """Write run.json; `final` (the end of a run) still succeeds on a full disk (see write_record)."""
        self.updated_at = datetime.now(UTC).isoformat(timespec="seconds")
        paths.make_private_dir(self.dir)
        write_record(self.dir / "run.json", json.dumps(dataclasses.asdict(self), indent=2), final=final)

    def process_alive(self) -> bool | None:
        """For a `running` record of this machine: is its process alive? None when that cannot be known
        (finished, or another machine's run)."""
        from openbot.processes import alive

        if (
            self.status != "running"
            or self.host != socket.gethostname()
            or not isinstance(self.pid, int)
            or self.pid <= 0
        ):
            return None
        return alive(self.pid)

    @classmethod
    def load(cls, path: Path) -> RunRecord:
        """Read and validate a run.json; ConfigError (exit 2, one line naming the file and key) otherwise."""
        try:
            data: dict[str, Any] = loads_strict(path.read_bytes())
        except (OSError, ValueError) as e:  # UnicodeDecodeError is a ValueError
            raise ConfigError(f"{path}: unreadable run record: {str(e).splitlines()[0]}") from e
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: a run record must be a JSON object")
        known = {f.name: f for f in dataclasses.fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        for name, value in values.items():
            if not _has_type(value, str(known[name].type)):
                raise ConfigError(
                    f"{path}: run record key '{name}' has the wrong type: {_short(value)}",
                    hint="this file is written by openbot only; restore it or delete the run's directory",
                )
        if "run_id" not in values:
            raise ConfigError(f"{path}: incomplete run record: no 'run_id'")
        _owner_from_place(path, values)
        rec = cls(**values)
        rec._check(path)
        return rec

    def _check(self, path: Path) -> None:
        """What openbot itself writes: its run id format, a known status, and a branch of its own."""
        problems = []
        if not RUN_ID_RE.match(self.run_id) or path.parent.name != self.run_id:
            problems.append(f"run_id {self.run_id!r} is not this directory's openbot run id")
        if self.status not in STATUSES:
            problems.append(f"status {self.status!r} is not one of {', '.join(STATUSES)}")
        if self.use_worktree and self.branch and not _openbot_branch(self.branch):
            problems.append(f"branch {self.branch!r} is not an openbot/ branch")
        if self.base_commit and not _SHA_RE.match(self.base_commit):
            problems.append(f"base_commit {self.base_commit!r} is not a commit id")
        bad_wip = [w for w in self.wip_commits if not _SHA_RE.match(w)]
        if bad_wip:
            problems.append(f"wip_commits holds {bad_wip[0]!r}, not a commit id")
        if problems:
            raise ConfigError(
                f"{path}: not a run record openbot wrote: {problems[0]}",
                hint="restore it or delete the run's directory",
            )


def _owner_from_place(path: Path, values: dict[str, object]) -> None:
    """Where a record lives says whose it is: one naming another bot or project would be saved there."""
    up = path.parents
    if len(up) <= 4 or up[1].name != "runs" or up[3].name != "workspaces":
        return
    for key, where in (("project", up[2].name), ("bot", up[4].name)):
        if values.setdefault(key, where) != where:
            raise ConfigError(
                f"{path}: run record key '{key}' is {values[key]!r}, but the record lives under {where!r}",
                hint="restore it or delete the run's directory",
            )


def _openbot_branch(branch: str) -> bool:
    short = branch.removeprefix("refs/heads/")
    parts = short.split("/")
    return short.startswith("openbot/") and len(short) > 8 and ".." not in short and "" not in parts


_SCALARS: dict[str, type | tuple[type, ...]] = {"str": str, "bool": bool, "float": (int, float), "int": int}


def _has_type(value: object, want: str) -> bool:
    """Whether a JSON value fits a RunRecord field's annotation (bool is never an int here)."""
    if want == "int | None":
        return value is None or _has_type(value, "int")
    if want == "bool | None":
        return value is None or isinstance(value, bool)
    if want == "dict[str, object]":
        return isinstance(value, dict)
    if want == "list[str]":
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    if want == "dict[str, int]":
        return isinstance(value, dict) and all(_has_type(v, "int") for v in value.values())
    if want in ("int", "float") and isinstance(value, bool):
        return False
    return isinstance(value, _SCALARS[want])


def _short(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def run_files(bot: str, run_id: str = "*") -> list[Path]:
    """The run.json files of a bot's runs (one run id, or all) in every project."""
    if run_id != "*":
        check_run_id(run_id)  # never a glob or a path from outside
    return sorted((paths.bot_home(bot) / "workspaces").glob(f"*/runs/{run_id}/run.json"))


LAST = "last"  # `--resume` alone or `--resume last`: the bot's newest resumable run in this project


def last_resumable(bot: str, project: str) -> RunRecord:
    """The newest run of this bot in this project that a resume can continue: not alive, not discarded."""
    for path in sorted(paths.runs_dir(bot, project).glob("*/run.json"), reverse=True):
        if not RUN_ID_RE.match(path.parent.name):
            continue
        rec = RunRecord.load(path)  # a damaged newest record is said (exit 2), never skipped silently
        if rec.action != "discard" and (rec.pid == os.getpid() or not rec.process_alive()):
            return rec
    raise NotFoundError(
        f"no run of bot '{bot}' to resume in this project",
        hint=f"start one: openbot run {bot} (`openbot history {bot}` lists runs with their ids)",
    )


def find_run(bot: str, project: str, run_id: str) -> RunRecord:
    """The run in this project, else in any project of this bot; NotFoundError (exit 2) otherwise."""
    if run_id == LAST:
        return last_resumable(bot, project)
    check_run_id(run_id)
    direct = paths.runs_dir(bot, project) / run_id / "run.json"
    if direct.is_file():
        return RunRecord.load(direct)
    for candidate in run_files(bot, run_id):
        return RunRecord.load(candidate)
    runs = sorted(p.name for p in paths.runs_dir(bot, project).glob("*") if (p / "run.json").is_file())
    hint = f"recent runs here: {', '.join(runs[-3:])}" if runs else "no runs of this bot in this project"
    raise NotFoundError(f"no run '{run_id}' of bot '{bot}'", hint=hint)


def mark_dead(bot: str, run_id: str, wip_sha: str | None) -> RunRecord | None:
    """Record that a run's process died (found by a later run's sweep): the run and its open session
    become `failed`, with the WIP commit that saved its work. Returns the record, if there is one."""
    from openbot.state.history import History

    if not RUN_ID_RE.match(run_id):
        return None  # not one of openbot's runs
    found = run_files(bot, run_id)
    if not found:
        return None
    try:
        rec = RunRecord.load(found[0])
    except ConfigError:
        return None  # a damaged record is left for the user to see in `history`, never rewritten
    if rec.status != "running":
        return rec
    why = "the openbot process died (killed or crashed); a later run recovered its worktree"
    rec.status, rec.reason = "failed", why + (f" as WIP commit {wip_sha[:12]}" if wip_sha else "")
    if wip_sha:
        rec.wip_commits.append(wip_sha)
    tmp = Path(rec.tmp_dir)
    if rec.tmp_dir and tmp.name.startswith("openbot-run-") and tmp.parent == Path(tempfile.gettempdir()):
        shutil.rmtree(rec.tmp_dir, ignore_errors=True)
    history = History(paths.history_dir(bot, rec.project))
    for session_id in rec.session_ids[-1:]:
        try:
            meta = history.get(session_id)
        except NotFoundError:
            continue
        if meta.status == "running":
            meta.status, meta.error = "failed", rec.reason
            meta.wip_commit = wip_sha or meta.wip_commit
            history.recount(meta)
            rec.summary = meta.response_summary
            history.save(meta)
    rec.save()
    return rec


def mark_dead_runs(bot: str, project: str, recent: int = 20) -> list[str]:
    """Mark this bot's recent runs whose process died on this machine (runs without a worktree have no
    sweep to find them). A pid that is alive again (reused) is left alone: never a live run's record."""
    root = paths.runs_dir(bot, project)
    try:
        names = sorted(os.listdir(root))[-recent:]
    except FileNotFoundError:
        return []
    dead = []
    for name in names:
        try:
            rec = RunRecord.load(root / name / "run.json")
        except ConfigError:
            continue
        if rec.pid == os.getpid() or rec.process_alive() is not False:
            continue
        mark_dead(bot, rec.run_id, None)
        dead.append(rec.run_id)
    return dead
