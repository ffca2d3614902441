"""`openbot doctor`: one PASS/WARN/FAIL line per check, exit 1 on any FAIL, the API key never printed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from openbot.sandbox import FORCE_UNAVAILABLE_ENV, kernel_support


@pytest.fixture(autouse=True)
def real_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(FORCE_UNAVAILABLE_ENV, raising=False)


def lines(result) -> dict[str, str]:
    """{check name: status} from doctor's output."""
    out = {}
    for line in result.stdout.splitlines():
        status, rest = line.split(" ", 1)
        out[rest.split(":", 1)[0]] = status
    return out


def test_healthy_setup(cli, tmp_path: Path, openbot_home: Path) -> None:
    openbot_home.mkdir()
    cli("bots", "create", "fixer", cwd=tmp_path)
    r = cli("doctor")
    got = lines(r)
    assert got["OPENBOT_HOME"] == "PASS" and got["git"] == "PASS" and got["bot fixer (home)"] == "PASS"
    assert "git version" in r.stdout and f"{openbot_home} exists and is writable" in r.stdout
    assert got["ANTHROPIC_API_KEY"] == "WARN"  # scripted bots need no key: not a failure
    support = kernel_support()
    expected = "PASS" if support.network else "WARN" if support.filesystem else "FAIL"
    assert got["sandbox"] == expected and support.detail in r.stdout
    assert r.exit_code == (1 if expected == "FAIL" else 0)


def test_api_key_is_never_printed(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret-value-123")
    r = cli("doctor", cwd=tmp_path)
    assert lines(r)["ANTHROPIC_API_KEY"] == "PASS"
    assert "secret" not in r.output


def test_home_that_does_not_exist_yet(cli, tmp_path: Path, openbot_home: Path) -> None:
    r = cli("doctor", cwd=tmp_path)
    assert lines(r)["OPENBOT_HOME"] == "PASS" and "will be created" in r.stdout
    assert not openbot_home.exists()  # doctor only looks


def test_home_that_is_a_file(cli, tmp_path: Path, openbot_home: Path) -> None:
    openbot_home.write_text("oops")
    r = cli("doctor", cwd=tmp_path)
    assert lines(r)["OPENBOT_HOME"] == "FAIL" and "not a directory" in r.stdout and r.exit_code == 1


def test_git_missing(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "empty-bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    r = cli("doctor", cwd=tmp_path)
    assert lines(r)["git"] == "FAIL" and r.exit_code == 1


@pytest.mark.parametrize(("forced", "status", "code"), [("1", "FAIL", 1), ("network", "WARN", None)])
def test_sandbox_support(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forced, status, code) -> None:
    monkeypatch.setenv(FORCE_UNAVAILABLE_ENV, forced)
    r = cli("doctor", cwd=tmp_path)
    assert lines(r)["sandbox"] == status
    if code is not None:
        assert r.exit_code == code and "1 check failed" in r.stderr


def test_sandbox_module_missing(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openbot.sandbox", None)  # makes the import fail like a missing module
    r = cli("doctor", cwd=tmp_path)
    assert "FAIL sandbox: module missing" in r.stdout and r.exit_code == 1


def test_invalid_bots_fail_but_do_not_stop_the_checks(cli, repo: Path, openbot_home: Path) -> None:
    cli("bots", "create", "good", cwd=repo)
    broken = repo / ".openbot" / "bots" / "broken" / "config.md"
    broken.parent.mkdir(parents=True)
    broken.write_text("+++\nmax_iterations = 'ten'\n+++\n")
    home_broken = openbot_home / "bots" / "bad-home" / "config.md"
    home_broken.parent.mkdir(parents=True)
    home_broken.write_text("+++\nmodel = \n")
    r = cli("doctor")
    got = lines(r)
    assert got["bot good (home)"] == "PASS"
    assert got["bot broken (repo)"] == "FAIL" and "'max_iterations' must be an integer" in r.stdout
    assert got["bot bad-home (home)"] == "FAIL" and "not closed" in r.stdout
    assert r.exit_code == 1


def test_invalid_skill_files_fail_naming_each_file(cli, repo: Path, openbot_home: Path) -> None:
    # Bug fixed: doctor said PASS while a bad skill broke every run of the bot.
    cli("bots", "create", "sb", cwd=repo)
    learned = openbot_home / "bots" / "sb" / "skills" / "learned.md"
    learned.parent.mkdir(parents=True)
    learned.write_text("---\ndescription: use it: always\n---\nBody.\n")
    global_bad = openbot_home / "skills" / "g" / "SKILL.md"
    global_bad.parent.mkdir(parents=True)
    global_bad.write_text("---\nname: [1]\n---\n")
    (openbot_home / "skills" / "fine.md").write_text("Fine.\n")
    r = cli("doctor")
    got = lines(r)
    assert got["skill learned (bot sb, home)"] == "FAIL" and got["skill g (global)"] == "FAIL"
    assert str(learned) in r.stdout and str(global_bad) in r.stdout and "skills" not in got
    assert got["bot sb (home)"] == "PASS" and r.exit_code == 1
    learned.unlink()
    global_bad.unlink()
    r = cli("doctor")
    assert lines(r)["skills"] == "PASS" and "all load" in r.stdout


def test_config_values_caught_only_mid_run_fail_in_doctor(cli, tmp_path: Path, openbot_home: Path) -> None:
    for name, line in (("env", 'env_passthrough = ["*"]'), ("ship", 'shipped_skills = ["nonexistent"]')):
        config = openbot_home / "bots" / name / "config.md"
        config.parent.mkdir(parents=True)
        config.write_text(f"+++\n{line}\n+++\nGo.\n")
    r = cli("doctor", cwd=tmp_path)
    got = lines(r)
    assert got["bot env (home)"] == "FAIL" and got["bot ship (home)"] == "FAIL" and r.exit_code == 1
    assert "key 'env_passthrough'" in r.stdout and "key 'shipped_skills'" in r.stdout


def test_scripted_bots_fail_when_their_script_is_missing_or_broken(
    cli, tmp_path: Path, openbot_home: Path
) -> None:
    # Bug fixed: doctor said PASS for a bot whose script did not exist; every run of it failed.
    scripts = {"good": '{"responses": [{"text": "hi"}]}', "bad": "{not json", "shape": '{"responses": 1}'}
    for name in ("good", "bad", "shape", "missing"):
        bot_dir = openbot_home / "bots" / name
        bot_dir.mkdir(parents=True)
        (bot_dir / "config.md").write_text(f'+++\nmodel = "scripted:{name}.json"\n+++\nGo.\n')
        if name in scripts:
            (bot_dir / f"{name}.json").write_text(scripts[name])
    # Resolved against the bot's directory, as runs do: a file of that name here must not count.
    (tmp_path / "missing.json").write_text(scripts["good"])
    r = cli("doctor", cwd=tmp_path)
    got = lines(r)
    assert got["bot good (home)"] == "PASS" and f"replays {openbot_home / 'bots/good/good.json'}" in r.stdout
    assert got["bot missing (home)"] == "FAIL"
    assert f"does not exist: {openbot_home / 'bots/missing/missing.json'}" in r.stdout
    assert got["bot bad (home)"] == "FAIL" and "not valid JSON" in r.stdout
    assert got["bot shape (home)"] == "FAIL" and "'responses' list" in r.stdout
    assert r.exit_code == 1


def test_scripted_model_with_an_absolute_path_or_a_directory(cli, tmp_path: Path, openbot_home: Path) -> None:
    script = tmp_path / "abs.json"
    script.write_text('{"responses": []}')
    for name, model in (("abs", f"scripted:{script}"), ("dir", f"scripted:{tmp_path}")):
        config = openbot_home / "bots" / name / "config.md"
        config.parent.mkdir(parents=True)
        config.write_text(f'+++\nmodel = "{model}"\n+++\nGo.\n')
    r = cli("doctor", cwd=tmp_path)
    got = lines(r)
    assert got["bot abs (home)"] == "PASS"
    assert got["bot dir (home)"] == "FAIL" and f"is not a file: {tmp_path}" in r.stdout


def test_the_teams_verify_toml_is_checked(cli, tmp_path: Path, openbot_home: Path) -> None:
    openbot_home.mkdir(parents=True, exist_ok=True)
    (openbot_home / "verify.toml").write_text('verify = ["make lint", "make test"]\n')
    ok = cli("doctor", cwd=tmp_path)
    assert "PASS verify.toml:" in ok.stdout and "2 command(s)" in ok.stdout
    (openbot_home / "verify.toml").write_text("verify = 3\n")
    bad = cli("doctor", cwd=tmp_path)
    assert (
        bad.exit_code == 1 and "FAIL verify.toml:" in bad.stdout and "must be a list of strings" in bad.stdout
    )
