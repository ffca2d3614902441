"""`openbot digest` through the real CLI, on runs made by scripted bots in real repositories."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from openbot import paths
from tests.helpers import complete, git, make_bot, make_repo, reply, run_cli, shell


def _runs(tmp_path: Path) -> tuple[Path, Path, dict[str, dict[str, object]]]:
    app, lib = make_repo(tmp_path / "app"), make_repo(tmp_path / "lib")
    make_bot(
        "writer",
        [
            reply("", shell("printf 'a\\nb\\n' > notes.txt && git add -A && git commit -qm notes")),
            reply("", complete("wrote <script>alert(1)</script> notes", "review")),
        ],
    )
    make_bot(
        "stopper",
        [reply("", shell("echo x > x.txt && git add -A && git commit -qm x")), reply("still working")],
        config="max_iterations = 1",
    )
    results = {}
    for bot, repo in (("writer", app), ("stopper", lib)):
        out = run_cli("run", bot, "--json", cwd=repo)
        results[bot] = json.loads(out.stdout)
    return app, lib, results


def test_digest_reports_every_run_and_its_commands_work(tmp_path: Path) -> None:
    app, lib, results = _runs(tmp_path)
    assert results["writer"]["exit_code"] == 0 and results["stopper"]["exit_code"] == 3
    out = run_cli("digest", "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    rows = {r["bot"]: r for r in report["runs"]}
    assert report["totals"]["runs"] == 2 and report["totals"]["by_status"] == {"completed": 1, "limit": 1}
    writer, stopper = rows["writer"], rows["stopper"]
    assert writer["repo"] == str(app) and writer["status"] == "completed" and writer["verified"] is None
    assert writer["diffstat"] == {"files": 1, "insertions": 2, "deletions": 0}
    assert set(writer["commands"]) == {"accept", "reject"}
    assert stopper["status"] == "limit" and "iteration limit" in stopper["reason"]
    assert stopper["commands"]["continue"] == f"cd {lib} && openbot run stopper --resume {stopper['run_id']}"
    # the commands do what they say: accept merges the work, reject drops the branch
    subprocess.run(writer["commands"]["accept"], shell=True, check=True, capture_output=True)
    assert (app / "notes.txt").read_text() == "a\nb\n"
    subprocess.run(stopper["commands"]["reject"], shell=True, check=True, capture_output=True)
    assert stopper["branch"] not in git(lib, "branch", "--list")


def test_digest_markdown_html_since_and_bad_input(tmp_path: Path) -> None:
    _runs(tmp_path)
    md = run_cli("digest", cwd=tmp_path)
    assert md.returncode == 0 and "| writer |" in md.stdout and "2 runs in the last 24h" in md.stdout
    assert "<script>" not in md.stdout and "1 file +2" in md.stdout
    page = tmp_path / "digest.html"
    out = run_cli("digest", "--format", "html", "-o", str(page), cwd=tmp_path)
    assert out.returncode == 0 and "wrote" in out.stderr
    text = page.read_text()
    assert "<table>" in text and "&lt;script&gt;" in text and "<script>" not in text
    # a run last updated two days ago is not in the last 24 hours
    record = next(paths.bot_home("stopper").glob("workspaces/*/runs/*/run.json"))
    data = json.loads(record.read_text())
    record.write_text(json.dumps({**data, "updated_at": "2020-01-01T00:00:00+00:00"}))
    rows = json.loads(run_cli("digest", "--json", cwd=tmp_path).stdout)["runs"]
    assert [r["bot"] for r in rows] == ["writer"]
    assert len(json.loads(run_cli("digest", "--json", "--since", "10000w", cwd=tmp_path).stdout)["runs"]) == 2
    bad = run_cli("digest", "--since", "yesterday", cwd=tmp_path)
    assert bad.returncode == 2 and "--since" in bad.stderr and "Traceback" not in bad.stderr
    assert run_cli("digest", "--format", "pdf", cwd=tmp_path).returncode == 2


def test_digest_of_named_summaries_keeps_their_pr_link_and_diffstat(tmp_path: Path) -> None:
    _, _, results = _runs(tmp_path)
    night = tmp_path / "artifacts" / "writer"
    night.mkdir(parents=True)
    summary = {**results["writer"], "repo_root": "", "pr_url": "https://example.invalid/pr/7"}
    summary["diffstat"] = {"files": 3, "insertions": 9, "deletions": 1}
    (night / "result.json").write_text(json.dumps(summary))
    (night / "other.json").write_text('{"not": "a run"}')
    out = run_cli("digest", str(tmp_path / "artifacts"), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "1 run in the last 24h" in out.stdout and "3 files +9 −1" in out.stdout
    assert "https://example.invalid/pr/7" in out.stdout
    missing = run_cli("digest", str(tmp_path / "nowhere"), cwd=tmp_path)
    assert missing.returncode == 2 and "nowhere" in missing.stderr


def test_a_run_whose_process_died_is_shown_so_with_the_command_that_goes_on(tmp_path: Path) -> None:
    _, lib, results = _runs(tmp_path)
    record = next(paths.bot_home("stopper").glob("workspaces/*/runs/*/run.json"))
    dead = subprocess.Popen(["true"])
    dead.wait()  # a pid that no longer runs
    record.write_text(json.dumps({**json.loads(record.read_text()), "status": "running", "pid": dead.pid}))
    rows = {r["bot"]: r for r in json.loads(run_cli("digest", "--json", cwd=tmp_path).stdout)["runs"]}
    stopper = rows["stopper"]
    assert stopper["status"] == "died" and "process is gone" in stopper["reason"]
    assert stopper["commands"]["continue"].endswith(f"openbot run stopper --resume {stopper['run_id']}")


def test_the_digest_shows_the_slug_budget_toml_names_and_a_slug_matching_nothing_is_said(
    tmp_path: Path,
) -> None:
    """docs/BUDGET.md: `[repos.<slug>]`, the slug `openbot digest` shows; a typo'd slug is a cap that never
    applies: digest and doctor say so instead of accepting it silently."""
    _app, _lib, results = _runs(tmp_path)
    project = json.loads(run_cli("digest", "--json", cwd=tmp_path).stdout)["runs"][0]["project"]
    (paths.home() / "budget.toml").write_text(
        f"[repos.{project}]\ndaily_usd = 5.0\n[repos.app-typo1234]\ndaily_usd = 5.0\n"
    )
    md = run_cli("digest", cwd=tmp_path)
    assert md.returncode == 0 and f"({project})" in md.stdout, md.stdout
    (typo,) = [ln for ln in md.stdout.splitlines() if "app-typo1234" in ln]
    assert "matches no repository" in typo
    (good,) = [ln for ln in md.stdout.splitlines() if f"budget: daily cap (repo {project}" in ln]
    assert "matches no repository" not in good
    doctor = run_cli("doctor", cwd=tmp_path)
    (warn,) = [ln for ln in doctor.stdout.splitlines() if "app-typo1234" in ln and "WARN" in ln]
    assert "WARN" in warn and "matches no repository" in warn


def test_commands_from_crafted_records_are_quoted_and_never_touch_a_users_branch(tmp_path: Path) -> None:
    """A record is data anyone can write (a CI artifact): a "ready to paste" command must run nothing it
    names, and never offer to merge or delete a branch that is not openbot's."""
    repo = make_repo(tmp_path / "repo")
    git(repo, "branch", "openbot/x-1")
    canary = tmp_path / "pasted-and-ran"
    base = {"project": "p", "status": "failed", "exit_code": 1, "repo_root": str(repo), "cost_usd": 0}
    records = {
        "main": {**base, "bot": "b", "run_id": f"20260101T000000Z-abcd; touch {canary}", "branch": "main"},
        "done": {**base, "bot": "b", "run_id": "r2", "branch": "main", "status": "completed"},
        "bot": {
            **base,
            "bot": f"b; touch {canary}",
            "run_id": "20260101T000000Z-beef",
            "branch": "openbot/x-1",
        },
        "dots": {**base, "bot": "b", "run_id": "r4", "branch": "openbot/../main"},
    }
    for name, record in records.items():
        (tmp_path / "artifacts" / name).mkdir(parents=True)
        (tmp_path / "artifacts" / name / "run.json").write_text(json.dumps(record))
    out = run_cli("digest", "--json", str(tmp_path / "artifacts"), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    commands = [c for row in json.loads(out.stdout)["runs"] for c in row["commands"].values()]
    assert not any("main" in c for c in commands), commands
    assert commands == [
        f"git -C {repo} branch -D openbot/x-1",
        f"cd {repo} && openbot run 'b; touch {canary}' --resume 20260101T000000Z-beef",
    ]
    for command in commands:  # pasted as printed: they run only what they say
        subprocess.run(command.replace("openbot run", "true"), shell=True, cwd=tmp_path, check=False)
    assert not canary.exists() and git(repo, "branch", "--list", "main")
    markdown = run_cli("digest", str(tmp_path / "artifacts"), cwd=tmp_path).stdout
    assert "branch -D main" not in markdown and "--resume 20260101T000000Z-abcd" not in markdown
    assert f"openbot run 'b; touch {canary}' --resume" in markdown
