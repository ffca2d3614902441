"""The sweep: runs that died (SIGKILL, a crash, a reboot) left repositories behind; save and remove them.

A dead run's branch and uncommitted work are brought home exactly as at the end of a live run
(home.py: verified import, compare-and-swap), then its directories go. Only openbot's own run
repositories are touched, never the user's linked worktrees.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from openbot.errors import GitError
from openbot.git.repo import RepoInfo
from openbot.git.runsdir import detach, empty_trash, owners, runs_lock
from openbot.processes import owner_gone, stop_processes_in


@dataclass(frozen=True)
class SweptRun:
    name: str
    branch: str
    wip_sha: str | None  # the recovered uncommitted work, None if there was none
    run_id: str  # the dead run, "?" when its owner record did not say
    bot: str = "?"
    note: str = ""  # what could not be recovered
    kept: bool = False  # not brought home (`note` says why): its directories are left as they are

    def __str__(self) -> str:
        if self.kept:
            return f"kept the repository of dead run {self.run_id} of {self.bot} ({self.name}): {self.note}"
        saved = f"work saved as {self.wip_sha[:12]}" if self.wip_sha else "nothing uncommitted"
        note = f" ({self.note})" if self.note else ""
        run = f"{self.name} of {self.bot} run {self.run_id}"
        return f"recovered the work of a dead run: {run}: {saved} on branch {self.branch}{note}"


def sweep_dead(repo: RepoInfo) -> list[SweptRun]:
    """Bring home and remove the run repositories whose run certainly died; those that cannot be brought
    home are kept, and listed (`kept`)."""
    swept: list[SweptRun] = []
    trash: list[Path] = []
    with runs_lock(repo.common_dir) as root:
        for rr, owner in owners(root):
            missing = not rr.path.exists() and not rr.git_dir.exists()
            if not owner_gone(owner, missing):
                continue
            run_id = str(owner.get("run_id", "?"))
            if not missing:
                # what brings a branch home is imported only when a run died (not on every run's start)
                from openbot.git.home import bring_home
                from openbot.git.wip import left_out_line

                stop_processes_in(rr.path)  # the dead run's command may still be writing there
                bot = str(owner.get("bot", "?"))
                try:
                    home = bring_home(rr, f"openbot: WIP recovered from dead run {run_id}")
                except GitError as e:  # keep the directories rather than lose the work, and say so
                    swept.append(SweptRun(rr.name, rr.branch, None, run_id, bot, e.one_line(), kept=True))
                    continue
                # what the WIP limits left out is said: the run repository goes, and those files with it
                said = [home.note, left_out_line(home.left_out) if home.left_out else ""]
                swept.append(
                    SweptRun(rr.name, home.branch, home.wip, run_id, bot, "; ".join(n for n in said if n))
                )
            trash += detach(rr)
        trash += [p for p in root.glob(".trash-*")]  # left by a removal that was itself interrupted
    empty_trash(trash)
    return swept
