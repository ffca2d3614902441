"""`openbot history <bot> --export html` writes one self-contained page of a real session."""

from __future__ import annotations

import stat
from pathlib import Path

from tests.helpers import complete, make_bot, reply, run_cli, sessions, shell


def test_export_html_of_the_latest_session(repo: Path, tmp_path: Path) -> None:
    make_bot(
        "exp", [reply("Listing <files>.", shell("echo '<script>x</script>'")), reply("", complete("ok"))]
    )
    assert run_cli("run", "exp", cwd=repo).returncode == 0
    target = tmp_path / "page.html"
    out = run_cli("history", "exp", "--export", "html", "-o", str(target), cwd=repo)
    assert out.returncode == 0, out.stderr
    page = target.read_text()
    assert page.startswith("<!DOCTYPE html>") or page.lower().startswith("<!doctype html>")
    assert "&lt;script&gt;x&lt;/script&gt;" in page and "<script>x</script>" not in page
    assert "Listing &lt;files&gt;." in page
    # each command is shown once, with its output: not once as a call and again as a command
    assert page.count("echo &#x27;&lt;script&gt;x&lt;/script&gt;&#x27;") == 1
    assert 'src="http' not in page and 'href="http' not in page  # self-contained: no external assets


def test_export_rejects_unknown_formats_and_empty_history(repo: Path) -> None:
    make_bot("none", [])
    bad = run_cli("history", "none", "--export", "pdf", cwd=repo)
    assert bad.returncode == 2 and "--export html" in bad.stderr
    empty = run_cli("history", "none", "--export", "html", cwd=repo)
    assert empty.returncode == 2 and "no sessions" in empty.stderr


def test_export_without_output_writes_into_the_session_not_the_repo(repo: Path, tmp_path: Path) -> None:
    make_bot("exp", [reply("", complete("ok"))])
    assert run_cli("run", "exp", cwd=repo).returncode == 0
    before = sorted(p.name for p in repo.iterdir())
    out = run_cli("history", "exp", "--export", "html", cwd=repo)
    assert out.returncode == 0, out.stderr
    (session,) = sessions("exp")
    page = session / "transcript.html"
    # Bug fixed: the page was written into the user's repository.
    assert out.stdout.strip() == f"wrote {page}" and sorted(p.name for p in repo.iterdir()) == before
    assert page.read_text().lower().startswith("<!doctype html>")
    assert stat.S_IMODE(page.stat().st_mode) == 0o600

    # Bug fixed: a bad -o gave a traceback; now one line naming the path, exit 2.
    missing = tmp_path / "nonexistent" / "x.html"
    bad = run_cli("history", "exp", "--export", "html", "-o", str(missing), cwd=repo)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert (
        bad.stderr.startswith(f"openbot: error: cannot write {missing}: the directory ")
        and len(bad.stderr.splitlines()) == 1
    )
    is_dir = run_cli("history", "exp", "--export", "html", "-o", str(tmp_path), cwd=repo)
    assert is_dir.returncode == 2 and f"cannot write {tmp_path}: it is a directory" in is_dir.stderr
