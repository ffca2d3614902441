"""The harnesses of the real-model benchmark (scripts/bench_realmodel.py): each runs one task and returns
where its work is (a repository and a commit) with what it said — never whether it solved the task; the
benchmark's own check decides that.

openbot: `openbot eval` (the suite file, or --from-history in the library's clone) with a bot made by
`openbot bots create` and pointed at the server — the three keys a user adds for a local model, nothing else.
aider: aider-chat in its own venv, `--edit-format whole`, the repository's test as `--test-cmd` where it has
one. mini: mini-swe-agent's mini_textbased.yaml with litellm_textbased, as its docs say for local models.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench_sets import REPOS, Item

from openbot.run.eval import prepare

MODEL = "qwen2.5-coder-1.5b"
TOOLS = Path(os.environ.get("BENCH_TOOLS", "/work/bench-tools"))
AIDER = TOOLS / "aider" / "bin" / "aider"
MINI = TOOLS / "mswea" / "bin" / "mini"
# What counts as a harness saying that nothing checked its work (openbot's "not verified: nothing checked")
UNCHECKED = re.compile(r"not verified|nothing checked|unverified", re.I)
OFFLINE = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "OPENAI_API_KEY": "x", "NO_COLOR": "1"}


@dataclass
class Outcome:
    repo: Path  # where the result is
    commit: str  # the commit the check runs on
    exit: int | None  # the harness's exit code (None: killed at the cap)
    claimed_done: bool  # it said it was done (exit 0; mini: "Submitted")
    said_unchecked: bool  # it said nothing checked the work
    status: str
    wall_secs: float
    info: dict[str, Any] = field(default_factory=dict)


def run_process(argv: list[str], cwd: Path, env: dict[str, str], log: Path, cap: float) -> int | None:
    """Run to the end or to `cap` seconds, then SIGTERM (and SIGKILL a minute later) its process group."""
    with log.open("w") as out:
        proc = subprocess.Popen(
            argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True
        )
        try:
            return proc.wait(timeout=cap)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        return None


def commit_all(repo: Path) -> str:
    """Whatever the harness left in the work tree, committed (its own files aside): the commit to check."""
    subprocess.run(["git", "add", "-A", "--", ".", ":!.aider*"], cwd=repo, check=True)
    subprocess.run(
        ["git", *prepare.IDENTITY, "commit", "-q", "--allow-empty", "-m", "left by the harness"],
        cwd=repo,
        check=True,
    )
    return git_out(repo, "rev-parse", "HEAD")


def git_out(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout.strip()


def make_bot(home: Path, base_url: str) -> dict[str, str]:
    """A bot as `openbot bots create bench` makes it, with the model, server and window a user adds."""
    env = {**os.environ, "OPENBOT_HOME": str(home)}
    subprocess.run([sys.executable, "-m", "openbot", "bots", "create", "bench"], env=env, check=True)
    config = home / "bots" / "bench" / "config.md"
    keys = f'model = "llamacpp:{MODEL}"\nbase_url = "{base_url}"\ncontext_window = 8192\n'
    text = config.read_text()
    assert text.startswith("+++\n"), text
    config.write_text("+++\n" + keys + text[4:])
    return env


def run_openbot(item: Item, work: Path, base_url: str, cap_min: float) -> Outcome:
    env = make_bot(work / "home", base_url)
    out = work / "eval.json"
    argv = [sys.executable, "-m", "openbot", "eval"]
    if item.set == "B":
        cwd = REPOS / item.library
        argv += ["--from-history", "200", "--tasks", item.sha, "--check", item.task.check]
        # the task's test as the bot's verify: what aider gets as --test-cmd
        argv += ["--check-as-verify"]
        argv += ["--max-minutes", str(cap_min)]
    else:
        cwd = work
        (work / "suite.toml").write_text(suite_toml(item, cap_min))
        argv += [str(work / "suite.toml")]
    argv += ["--bot", "bench", "--json", str(out), "--keep"]
    started = time.monotonic()
    code = run_process(argv, cwd, env, work / "eval.log", cap_min * 60 + 300)
    secs = round(time.monotonic() - started, 1)
    kept = re.findall(r"^kept: (.+)$", (work / "eval.log").read_text(), re.M)
    if code is None or not kept or not out.exists():
        raise RuntimeError(f"openbot eval exited {code} without its results: see {work / 'eval.log'}")
    r = json.loads(out.read_text())["results"][0]
    task_dir = Path(kept[-1]) / "task-001"
    repo = task_dir / "repo"
    ref = f"refs/heads/{r['branch']}" if r["branch"] else f"refs/heads/{prepare.BASE_BRANCH}"
    said = UNCHECKED.search((task_dir / "run.log").read_text(errors="replace") + " " + str(r.get("summary")))
    return Outcome(
        repo=repo,
        commit=git_out(repo, "rev-parse", ref),
        exit=r["exit_code"],
        claimed_done=r["exit_code"] == 0,
        said_unchecked=bool(said) or r.get("verified") == "unverified",
        status=f"{r['status']}{', ' + r['verified'] if r.get('verified') else ''}",
        wall_secs=secs,
        info={k: r.get(k) for k in ("model_calls", "tool_calls", "tokens")}
        | {"eval_exit": code, "eval_error": r.get("error")},
    )


def suite_toml(item: Item, cap_min: float) -> str:
    t = item.task
    files = ", ".join(f"{json.dumps(k)} = {json.dumps(v)}" for k, v in t.files.items())
    return (
        f"[[task]]\nname = {json.dumps(t.name)}\nprompt = {json.dumps(t.prompt)}\n"
        f"check = {json.dumps(t.check)}\nfiles = {{ {files} }}\nmax_minutes = {cap_min}\n"
    )


def run_aider(item: Item, work: Path, base_url: str, cap_min: float) -> Outcome:
    repo = work / "repo"
    base = prepare.make_repo(item.task, repo)
    argv = [str(AIDER), "--model", f"openai/{MODEL}", "--openai-api-base", base_url, "--openai-api-key", "x"]
    argv += ["--edit-format", "whole", "--yes-always", "--no-check-update", "--analytics-disable"]
    argv += ["--auto-commits", "--no-show-model-warnings", "--no-gitignore", "--no-pretty"]
    argv += ["--chat-history-file", str(work / "chat.md"), "--input-history-file", str(work / "input")]
    if item.test_cmd:
        argv += ["--test-cmd", item.test_cmd, "--auto-test"]
    argv += ["--message", item.task.prompt]
    env = {**os.environ, **OFFLINE, "HOME": str(work / "home")}
    started = time.monotonic()
    code = run_process(argv, repo, env, work / "aider.log", cap_min * 60)
    secs = round(time.monotonic() - started, 1)
    said = UNCHECKED.search((work / "aider.log").read_text(errors="replace"))
    commits = int(git_out(repo, "rev-list", "--count", f"{base}..HEAD"))
    return Outcome(
        repo,
        commit_all(repo),
        code,
        code == 0,
        bool(said),
        "exit" if code is not None else "cap",
        secs,
        {"commits": commits},
    )


def run_mini(item: Item, work: Path, base_url: str, cap_min: float) -> Outcome:
    repo = work / "repo"
    prepare.make_repo(item.task, repo)
    wall = int(cap_min * 60)
    argv = [
        str(MINI),
        "-y",
        "--exit-immediately",
        "--model-class",
        "litellm_textbased",
        "-m",
        f"openai/{MODEL}",
    ]
    argv += ["-c", "mini_textbased.yaml", "-c", f"model.model_kwargs.api_base={base_url}"]
    argv += ["-c", "model.cost_tracking=ignore_errors", "-c", f"agent.wall_time_limit_seconds={wall}"]
    argv += ["-c", f"environment.cwd={repo}", "-t", item.task.prompt, "-o", str(work / "traj.json")]
    env = {**os.environ, **OFFLINE, "MSWEA_CONFIGURED": "true", "MSWEA_COST_TRACKING": "ignore_errors"}
    env["HOME"] = str(work / "home")
    started = time.monotonic()
    code = run_process(argv, repo, env, work / "mini.log", wall + 120)
    secs = round(time.monotonic() - started, 1)
    status = _mini_status(work / "traj.json")
    said = UNCHECKED.search((work / "mini.log").read_text(errors="replace"))
    return Outcome(
        repo, commit_all(repo), code, status == "Submitted", bool(said), status or "no trajectory", secs
    )


def _mini_status(path: Path) -> str:
    if not path.exists():
        return ""
    return str(json.loads(path.read_text()).get("info", {}).get("exit_status", ""))


HARNESSES = {"openbot": run_openbot, "aider": run_aider, "mini": run_mini}
