"""The record of one run (`runs/<run_id>/run.json`) and finding it again for `--resume`."""

from __future__ import annotations

import dataclasses
import json
import os
import secrets
import shutil
import socket
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from openbot import paths
from openbot.errors import ConfigError, NotFoundError
from openbot.files import write_atomic


def new_run_id() -> str:
    """Sortable and unique even for two runs started in the same second."""
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(2)


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

    @property
    def dir(self) -> Path:
        return paths.runs_dir(self.bot, self.project) / self.run_id

    @property
    def conversation_path(self) -> Path:
        return self.dir / "conversation.jsonl"

    def save(self) -> None:
        self.updated_at = datetime.now(UTC).isoformat(timespec="seconds")
        paths.make_private_dir(self.dir)
        write_atomic(self.dir / "run.json", json.dumps(dataclasses.asdict(self), indent=2))

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
        try:
            data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise ConfigError(f"{path}: unreadable run record: {e}") from e
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: a run record must be a JSON object")
        known = {f.name for f in dataclasses.fields(cls)}
        try:
            return cls(**{k: v for k, v in data.items() if k in known})
        except TypeError as e:  # a required field is missing
            raise ConfigError(f"{path}: incomplete run record: {e}") from e


def run_files(bot: str, run_id: str = "*") -> list[Path]:
    """The run.json files of a bot's runs (one run id, or all) in every project."""
    return sorted((paths.bot_home(bot) / "workspaces").glob(f"*/runs/{run_id}/run.json"))


def find_run(bot: str, project: str, run_id: str) -> RunRecord:
    """The run in this project, else in any project of this bot; NotFoundError (exit 2) otherwise."""
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

    found = run_files(bot, run_id)
    if not found:
        return None
    rec = RunRecord.load(found[0])
    if rec.status != "running":
        return rec
    why = "the openbot process died (killed or crashed); a later run recovered its worktree"
    rec.status, rec.reason = "failed", why + (f" as WIP commit {wip_sha[:12]}" if wip_sha else "")
    if wip_sha:
        rec.wip_commits.append(wip_sha)
    if rec.tmp_dir and Path(rec.tmp_dir).name.startswith("openbot-run-"):
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
