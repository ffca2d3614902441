"""`openbot run --attempts N` (bot key `attempts`): N independent attempts, the first verified one kept.

Each attempt is a whole `openbot run <bot> --attempts 1` of its own — its own run repository, branch,
session, openbot's check at session_complete and the action that check allows — started as a subprocess
the way fleet and eval start runs (gate step `run.attempt`), at most `attempts_parallel` at a time (0: one
at a time on a local server, where a second request only queues; all at once elsewhere). The first attempt
openbot verified is kept with its branch and its action; every other one is stopped if it still runs, its
branch deleted, and said in one line. Without a verified attempt the last one to end is kept as a plain
run would be (its branch resumable). Attempts are chosen by openbot's check, so a bot with nothing to
check is refused (docs/VERIFY.md, "Attempts").
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from openbot import gate
from openbot.errors import EXIT_FAILED, UsageError
from openbot.git.actions import delete_branch
from openbot.git.gitcmd import run_git
from openbot.git.repo import RepoInfo

SUMMARY = "run_summary"


@dataclass
class Attempt:
    number: int
    summary: dict[str, Any] = field(default_factory=dict)
    exit_code: int = EXIT_FAILED
    proc: gate.Popen[bytes] | None = None

    @property
    def verified(self) -> bool:
        return self.summary.get("verified") is True

    def word(self) -> str:
        """How it ended, in a few words: its status and openbot's check."""
        if self.verified:
            return "verified"
        if self.summary.get("verified") is False:
            return "unverified (openbot's check failed)"
        return str(self.summary.get("status") or f"exit {self.exit_code}")


def check_attempts(
    attempts: int, resume: bool, use_worktree: bool, verify: tuple[str, ...], loose: bool
) -> None:
    """Attempts need a run repository each and a check to choose by: else exit 2, before anything runs."""
    if loose:
        raise UsageError(
            f"attempts = {attempts} keeps only verified work, but merge_unverified = true would merge any",
            hint="drop merge_unverified, or run with --attempts 1",
        )
    if resume:
        raise UsageError("--attempts starts new runs; --resume continues one", hint="drop one of them")
    if not use_worktree:
        raise UsageError(
            f"attempts = {attempts} needs a run repository per attempt", hint="drop --no-worktree"
        )
    if not verify:
        raise UsageError(
            f"attempts = {attempts} keeps the first attempt openbot verified, but the bot has no `verify`",
            hint='add verify = ["<your test command>"] to its config.md (docs/VERIFY.md)',
        )


def parallel_of(setting: int, attempts: int, local: bool) -> int:
    return max(1, min(attempts, setting or (1 if local else attempts)))


class Attempts:
    """Runs the attempts and decides; `forward` gets every stream line but the attempts' own summaries."""

    def __init__(
        self,
        argv: Callable[[int], list[str]],
        count: int,
        parallel: int,
        repo: RepoInfo,
        say: Callable[[str], None],
    ):
        self.argv, self.count, self.parallel, self.repo, self.say = argv, count, parallel, repo, say
        self.lock = threading.Lock()
        self.done = threading.Condition(self.lock)
        self.ended: list[Attempt] = []
        self.live: list[Attempt] = []
        self.stopping = 0  # a signal the user sent: no new attempt, the live ones get it
        self.forward: Callable[[bytes], None] = lambda line: None
        self.logs: Path | None = None

    def run(self) -> tuple[Attempt, list[Attempt]]:
        """(the kept attempt, every attempt in the order they ended)."""
        old = {s: signal.signal(s, self._signal) for s in (signal.SIGTERM, signal.SIGHUP)}
        try:
            for number in range(1, self.count + 1):
                with self.lock:
                    while len(self.live) >= self.parallel and not self._winner():
                        self.done.wait()
                    if self._winner() or self.stopping:
                        break
                    attempt = self._start(number)
                threading.Thread(target=self._follow, args=(attempt,), daemon=True).start()
            with self.lock:
                while self.live and not self._winner():
                    self.done.wait()
                for other in self.live:  # a winner is known: the others stop and bring their work home
                    if other.proc is not None:
                        other.proc.send_signal(signal.SIGTERM)
                while self.live:
                    self.done.wait()
        finally:
            for s, handler in old.items():
                signal.signal(s, handler)
        kept = self._merged() or self._winner() or self.ended[-1]
        for attempt in sorted(self.ended, key=lambda a: a.number):
            self.say(self._line(attempt, attempt is kept))
        return kept, self.ended

    def _winner(self) -> Attempt | None:
        return next((a for a in self.ended if a.verified), None)

    def _merged(self) -> Attempt | None:
        """Side by side, two attempts verified at once both try their merge and one wins the fast-forward:
        that one is kept, whichever ended first."""
        for attempt in self.ended:
            sha, base = attempt.summary.get("verified_sha"), attempt.summary.get("base")
            if attempt.verified and sha and base and attempt.summary.get("action") == "merge":
                proc = run_git(
                    self.repo.workdir,
                    "merge-base",
                    "--is-ancestor",
                    str(sha),
                    f"refs/heads/{base}",
                    check=False,
                )
                if proc.returncode == 0:
                    return attempt
        return None

    def _start(self, number: int) -> Attempt:
        self.say(f"attempt {number} of {self.count} starts")
        env = {**os.environ, "OPENBOT_ATTEMPT": str(number), "OPENBOT_ATTEMPTS": str(self.count)}
        err: IO[bytes] | None = None
        if self.parallel > 1 and self.logs is not None:  # side by side, their terminals would interleave
            err = open(self.logs / f"attempt-{number}.log", "wb")  # noqa: SIM115 (closed by _follow)
        proc = gate.popen(
            gate.RUN_ATTEMPT,
            self.argv(number),
            env=env,
            cwd=self.repo.workdir,
            stdin=gate.DEVNULL,
            stdout=gate.PIPE,
            stderr=err,
        )
        if err is not None:
            err.close()
        attempt = Attempt(number, proc=proc)
        self.live.append(attempt)
        return attempt

    def _follow(self, attempt: Attempt) -> None:
        assert attempt.proc is not None and attempt.proc.stdout is not None
        for line in attempt.proc.stdout:
            record = _record(line)
            if record.get("type") == SUMMARY:
                attempt.summary = record
            else:
                self.forward(line)
        code = attempt.proc.wait()
        with self.lock:
            attempt.exit_code = int(attempt.summary.get("exit_code", code))
            self.live.remove(attempt)
            self.ended.append(attempt)
            self.done.notify_all()

    def _signal(self, signum: int, frame: object) -> None:
        with self.lock:
            self.stopping = signum
            for attempt in self.live:
                if attempt.proc is not None:
                    attempt.proc.send_signal(signum)

    def _line(self, attempt: Attempt, kept: bool) -> str:
        branch = str(attempt.summary.get("branch") or "")
        if kept:
            where = f": branch {branch}" if branch else ""
            return f"attempt {attempt.number}: {attempt.word()}, kept{where}"
        return f"attempt {attempt.number}: {attempt.word()}, discarded{self._discard(branch)}"

    def _discard(self, branch: str) -> str:
        if not branch:
            return ""
        found = run_git(self.repo.workdir, "rev-parse", "--verify", "-q", f"refs/heads/{branch}", check=False)
        tip = found.stdout.strip()
        if found.returncode != 0:
            return f" (its branch {branch} is gone)"
        if delete_branch(self.repo, branch, tip):
            return f" (branch {branch} deleted; restore with `git branch {branch} {tip[:12]}`)"
        return f" (its branch {branch} could not be deleted)"


def _record(line: bytes) -> dict[str, Any]:
    try:
        found = json.loads(line)
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def child_argv(fields: dict[str, Any]) -> list[str]:
    """`openbot run` with the user's own options (each field of RunArgs is its flag), one attempt each,
    streaming jsonl so the parent reads the summary."""
    argv = [sys.executable, "-P", "-m", "openbot", "run"]
    for name, value in fields.items():
        if name in ("as_json", "output", "attempts", "attempts_parallel") or value in (None, False, ""):
            continue
        flag = "--bot" if name == "bot_opt" else "--" + name.replace("_", "-")
        if name == "bot":
            argv.append(str(value))
        elif value is True:
            argv.append(flag)
        else:
            argv += [flag, str(value)]
    return [*argv, "--attempts", "1", "--output", "jsonl"]


def on_local_server(model: str, base_url: str) -> bool:
    """A model on a local Chat Completions server (ollama, llama.cpp, … or a loopback base_url)."""
    from urllib.parse import urlsplit

    from openbot.config.model_names import LOCAL_SERVERS, parse_model

    name = parse_model(model)
    if name.backend != "chat":
        return False
    host = urlsplit(base_url or name.default_base_url).hostname or ""
    return name.server in LOCAL_SERVERS or host in ("localhost", "::1") or host.startswith("127.")
