"""`openbot history <bot> --export html` writes one self-contained page of a real session."""

from __future__ import annotations

from pathlib import Path

from tests.runhelpers import complete, make_bot, reply, run_cli, shell


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
    assert 'src="http' not in page and 'href="http' not in page  # self-contained: no external assets


def test_export_rejects_unknown_formats_and_empty_history(repo: Path) -> None:
    make_bot("none", [])
    bad = run_cli("history", "none", "--export", "pdf", cwd=repo)
    assert bad.returncode == 2 and "--export html" in bad.stderr
    empty = run_cli("history", "none", "--export", "html", cwd=repo)
    assert empty.returncode == 2 and "no sessions" in empty.stderr
