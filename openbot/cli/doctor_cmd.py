"""`openbot doctor`: one PASS/WARN/FAIL line per thing a run needs; exit 1 when anything FAILs.

Checks OPENBOT_HOME, git, the API key (presence only — its value is never printed), the kernel sandbox
(Landlock) and bubblewrap (the namespaces around it), each OpenAI or local model's server (doctor_models),
that every bot visible from here (home and the current repo) has a valid config, and that every skill
file in reach loads. A skill that does not load is a FAIL, not a WARN: runs skip it, so the bot would run
without instructions its owner wrote — and CI gates on doctor's exit code.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import typer

from openbot import gate
from openbot.cli.doctor_check import Check
from openbot.cli.typer_app import app


def check_home() -> Check:
    from openbot import paths

    home = paths.home()
    if home.exists():
        if not home.is_dir():
            return Check("FAIL", "OPENBOT_HOME", f"{home} is not a directory")
        if not os.access(home, os.W_OK | os.X_OK):
            return Check("FAIL", "OPENBOT_HOME", f"{home} is not writable")
        return Check("PASS", "OPENBOT_HOME", f"{home} exists and is writable")
    parent = next(p for p in home.parents if p.exists())
    if parent.is_dir() and os.access(parent, os.W_OK | os.X_OK):
        return Check("PASS", "OPENBOT_HOME", f"{home} will be created on first use")
    return Check("FAIL", "OPENBOT_HOME", f"{home} cannot be created: {parent} is not writable")


def check_git() -> Check:
    exe = shutil.which("git")
    if exe is None:
        return Check("FAIL", "git", "not found on PATH (install git)")
    try:
        out = gate.run(gate.DOCTOR_GIT, [exe, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, gate.TimeoutExpired) as e:
        return Check("FAIL", "git", f"{exe} does not run: {e}")
    if out.returncode != 0:
        return Check("FAIL", "git", f"{exe} --version failed: {out.stderr.strip()}")
    return Check("PASS", "git", f"{out.stdout.strip()} ({exe})")


def check_api_key() -> Check:
    if os.environ.get("ANTHROPIC_API_KEY"):
        return Check("PASS", "ANTHROPIC_API_KEY", "set")
    # Not a FAIL: scripted bots run offline without a key.
    return Check("WARN", "ANTHROPIC_API_KEY", "not set; Claude models need it (scripted bots do not)")


def check_python() -> Check:
    """What `python3` the bot's commands (and its checks) get: never openbot's own virtualenv."""
    from openbot.envpolicy import bots_python

    found = bots_python(os.environ)
    return Check("PASS" if found.startswith("/") else "WARN", "python3 for bots", found)


def check_sandbox() -> Check:
    try:
        from openbot.sandbox import kernel_support
    except ImportError:
        return Check("FAIL", "sandbox", "module missing")
    support = kernel_support()
    if not support.filesystem:
        return Check("FAIL", "sandbox", f"{support.detail}; the confined sandbox modes cannot run")
    if not support.network:
        return Check("WARN", "sandbox", support.detail)
    return Check("PASS", "sandbox", support.detail)


def check_bubblewrap() -> Check:
    """The sandbox's outer wall. A FAIL like Landlock's: runs refuse to start without it unless the bot
    sets sandbox_fallback = "warn"; the detail says what is missing and how to install or enable it."""
    try:
        from openbot.sandbox import kernel_support
    except ImportError:
        return Check("FAIL", "bubblewrap", "sandbox module missing")
    support = kernel_support()
    if not support.bwrap:
        return Check("FAIL", "bubblewrap", f"{support.bwrap_detail}; the confined sandbox modes cannot run")
    return Check("PASS", "bubblewrap", support.bwrap_detail)


def check_bots(repo_root: Path | None) -> Iterator[Check]:
    from openbot.config.bots import bots_by_source
    from openbot.errors import OpenbotError

    for ref, shadowed in bots_by_source(repo_root):
        name = f"bot {ref.name} ({ref.source})"
        try:
            model = ref.load().config.model
            script = _check_script(model, ref.config_path.parent)
        except OpenbotError as e:
            yield Check("FAIL", name, e.one_line())
            continue
        detail = f"{ref.config_path}" + (f", replays {script}" if script is not None else "")
        yield Check("PASS", name, detail + (" (shadowed by your home bot)" if shadowed else ""))


def _check_script(model: str, bot_dir: Path) -> Path | None:
    """The script a `scripted:` model replays, loaded as a run would; relative paths are the bot's dir's
    (as `openbot.agent.models.resolve_script` resolves them for a run). None for any other model."""
    from openbot.agent.models.scripted import ScriptedModel
    from openbot.config.model_names import parse_model, resolve_script
    from openbot.errors import ConfigError

    path = parse_model(resolve_script(model, bot_dir)).script
    if path is None:
        return None
    if not path.is_file():
        what = "is not a file" if path.exists() else "does not exist"
        raise ConfigError(
            f"the script of model {model!r} {what}: {path}", hint="fix the path after 'scripted:'"
        )
    try:
        ScriptedModel.from_file(path)
    except OSError as e:
        raise ConfigError(f"cannot read the script {path}: {e.strerror}") from e
    return path


def skill_dirs(repo_root: Path | None) -> list[tuple[Path, str]]:
    """Every skills directory a run from here may read, with the label doctor shows for it."""
    from openbot import paths
    from openbot.config.bots import bots_by_source

    dirs = [(paths.SHIPPED_SKILLS, "shipped"), (paths.global_skills_dir(), "global")]
    if repo_root is not None:
        dirs.append((paths.repo_skills_dir(repo_root), "repo"))
    for ref, _ in bots_by_source(repo_root):
        dirs.append((ref.config_path.parent / "skills", f"bot {ref.name}, {ref.source}"))
    return dirs


def check_skills(repo_root: Path | None) -> list[Check]:
    """One FAIL per skill file that does not load, or one PASS line for them all."""
    from openbot.config.skills import scan

    total, failed = 0, []
    for directory, label in skill_dirs(repo_root):
        found, invalid = scan(directory, label)
        total += len(found)
        failed += [
            Check("FAIL", f"skill {b.name} ({label})", f"{b.reason}; runs leave it out") for b in invalid
        ]
    return failed or [Check("PASS", "skills", f"{total} skill{'' if total == 1 else 's'} in reach, all load")]


def check_verify() -> list[Check]:
    """$OPENBOT_HOME/verify.toml (docs/VERIFY.md), when there is one."""
    from openbot.config.verify import home_file, team_commands
    from openbot.errors import ConfigError

    if not home_file().exists() and not home_file().is_symlink():
        return []
    try:
        commands = team_commands()
    except ConfigError as e:
        return [Check("FAIL", "verify.toml", e.one_line())]
    return [Check("PASS", "verify.toml", f"{len(commands)} command(s) every bot's work must pass")]


def check_budget() -> list[Check]:
    """$OPENBOT_HOME/budget.toml (docs/BUDGET.md), when there is one: its caps and what they have left."""
    from openbot.config.budgetcaps import load_caps, spending, unmatched
    from openbot.errors import ConfigError

    try:
        caps = load_caps()
    except ConfigError as e:
        return [Check("FAIL", "budget.toml", e.one_line())]
    if caps is None:
        return []
    used = "; ".join(f"{s['cap']}: ${s['used_usd']:.2f} used" for s in spending(caps)) or "no caps"
    why = "matches no repository openbot has run in (its slug: the project `openbot digest` shows)"
    lost = [Check("WARN", "budget.toml", f"[repos.{slug}] {why}") for slug in unmatched(caps)]
    return [Check("PASS", "budget.toml", used), *lost]


def all_checks() -> list[Check]:
    from openbot.cli.bots_cmd import repo_root
    from openbot.cli.doctor_mcp import check_mcp
    from openbot.cli.doctor_models import check_models

    root = repo_root()
    return [
        check_home(),
        check_git(),
        check_api_key(),
        check_python(),
        check_sandbox(),
        check_bubblewrap(),
        *check_bots(root),
        *check_models(root),
        *check_mcp(root),
        *check_skills(root),
        *check_verify(),
        *check_budget(),
    ]


@app.command()
def doctor() -> None:
    """Check that openbot can run here: OPENBOT_HOME, git, API key, sandbox, bot configs."""
    from openbot.views.escapes import visible

    checks = all_checks()
    for check in checks:
        typer.echo(visible(check.line()))  # it may quote a config or skill the bot wrote
    failed = sum(c.status == "FAIL" for c in checks)
    if failed:
        typer.echo(f"{failed} check{'s' if failed > 1 else ''} failed", err=True)
        raise typer.Exit(1)
