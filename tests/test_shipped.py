"""The shipped example bots, their scripts and the shipped skills: each loads, and each script can run.

Scripts are checked against the real tools' input schemas when every tool is importable, and always
against the required keys below; the shell steps of every script are run in a real git repository.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from openbot import paths
from openbot.agent.models.scripted import ScriptedModel
from openbot.config.botconfig import load_bot_file
from openbot.stops import ACTIONS
from tests.helpers import git, make_repo

BOTS = sorted(p.parent for p in paths.SHIPPED_BOTS.glob("*/config.md"))
SKILLS = sorted(paths.SHIPPED_SKILLS.glob("*.md"))
SCRIPTS = sorted([*paths.SHIPPED_BOTS.glob("*/script.json"), *paths.SHIPPED_BOTS.glob("*/dry-run.json")])

# Required input keys per tool (and per sub-command), as the prompt and the tool specs describe them.
REQUIRED: dict[str, dict[str, set[str]]] = {
    "shell": {"": {"command"}},
    "edit": {
        "view": {"path"},
        "create": {"path", "file_text"},
        "str_replace": {"path", "old_str", "new_str"},
        "insert": {"path", "insert_line", "new_str"},
    },
    "memory": {"set": {"key", "value"}, "remove": {"key"}},
    "session_history": {"list": set(), "view": {"session_number"}},
    "session_complete": {"": {"summary", "action"}},
}
SUBCOMMAND_KEY = {"edit": "command", "memory": "action", "session_history": "action"}


def _id(p: Path) -> str:
    return str(p.relative_to(paths.PACKAGE_ROOT))


def test_the_examples_are_shipped() -> None:
    assert {b.name for b in BOTS} == {"demo", "test-writer", "docs-fixer", "todo-triager", "release-notes"}
    assert {s.stem for s in SKILLS} >= {"writing-tests", "git-hygiene", "docs-style", "todo-triage"}
    for bot in BOTS:
        if bot.name != "demo":
            assert (bot / "dry-run.json").is_file(), f"{bot.name} has no dry-run.json"


@pytest.mark.parametrize("bot", BOTS, ids=_id)
def test_bot_config_loads(bot: Path) -> None:
    from openbot.config.skills import shipped_skills

    bf = load_bot_file(bot / "config.md")  # unknown keys and bad values raise ConfigError
    assert bf.config.description and len(bf.config.description) <= 100
    assert len(bf.instructions.split()) >= 80, "instructions worth running"
    assert "session_complete" in bf.instructions
    assert bf.config.network is False and bf.config.sandbox == "workspace-write"
    if bot.name == "demo":
        assert bf.config.model == "scripted:script.json" and bf.config.max_iterations == 1
    else:
        assert "model" not in bf.values, "real bots follow openbot's default model"
        assert bf.config.max_cost_usd > 0 and bf.config.max_minutes > 0, "a nightly bot has a budget"
        assert bf.config.shipped_skills, "real bots use the shipped skills"
    found = shipped_skills(bf.config.shipped_skills)  # an unknown skill name raises NotFoundError
    assert [s.name for s in found] == bf.config.shipped_skills


@pytest.mark.parametrize("skill", SKILLS, ids=_id)
def test_skill_loads(skill: Path) -> None:
    from openbot.config.skills import load_skill

    s = load_skill(skill, "shipped")
    assert s.name == skill.stem
    assert 20 <= len(s.description) <= 200
    assert len(s.body.split()) >= 100 and s.body.startswith("# ")


def _real_schemas() -> dict[str, dict[str, Any]] | None:
    """The registry's tool schemas, or None while some tool module is not there yet."""
    try:
        from openbot.agent.tools.registry import default_tools
    except ImportError:
        return None
    try:
        return {t.spec.name: t.spec.input_schema for t in default_tools()}
    except ImportError:
        return None


@pytest.mark.parametrize("script", SCRIPTS, ids=_id)
def test_script_uses_known_tools_correctly(script: Path) -> None:
    model = ScriptedModel.from_file(script)
    calls = [c for r in model.responses for c in r.get("tool_calls", [])]
    assert calls and all(len(r.get("tool_calls", [])) == 1 for r in model.responses), "one call per reply"
    servers = load_bot_file(script.parent / "config.md").config.mcp_servers
    for call in calls:
        name, args = call["name"], call.get("input", {})
        if "__" in name:  # an MCP server's tool: its schema is the server's (the dry run checks it)
            assert name.split("__")[0] in servers, f"{script}: {name!r} names no configured MCP server"
            continue
        assert name in REQUIRED, f"{script}: unknown tool {name!r}"
        sub = args.get(SUBCOMMAND_KEY[name], "") if name in SUBCOMMAND_KEY else ""
        assert sub in REQUIRED[name], f"{script}: {name} has no {sub!r}"
        missing = REQUIRED[name][sub] - set(args)
        assert not missing, f"{script}: {name} {sub} is missing {missing}"
    # The run ends exactly at the last reply: nothing after session_complete, no reply left unused.
    assert [c["name"] for c in calls].count("session_complete") == 1 and calls[-1][
        "name"
    ] == "session_complete"
    action = calls[-1]["input"]["action"]
    assert action in ACTIONS
    assert action == ("review" if script.name == "script.json" else "discard"), (
        "dry runs leave nothing behind"
    )


def test_scripts_match_the_real_tool_schemas() -> None:
    schemas = _real_schemas()
    if schemas is None:
        pytest.skip(
            "not every tool module exists yet (openbot.agent.tools.registry.default_tools fails to import)"
        )
    from openbot.agent.tools.registry import check_input

    assert set(schemas) == set(REQUIRED)
    for script in SCRIPTS:
        for r in ScriptedModel.from_file(script).responses:
            for call in r.get("tool_calls", []):
                if "__" in call["name"]:
                    continue  # an MCP tool
                problem = check_input(call["input"], schemas[call["name"]], f"{call['name']} input")
                assert problem is None, f"{script}: {problem}"


def _shell(cmd: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", cmd], cwd=cwd, capture_output=True, text=True, timeout=30)


@pytest.mark.parametrize("script", [s for s in SCRIPTS if s.name == "dry-run.json"], ids=_id)
def test_dry_run_commands_work(script: Path, tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path / "repo",
        {
            "README.md": "# demo\n\nRun `make test`.\n",
            "pyproject.toml": "[project]\nname = 'x'\n",
            "src/app.py": "def f():\n    return 1  # TODO: handle errors\n",
            "tests/test_app.py": "def test_f():\n    assert True\n",
        },
    )
    outputs = []
    for r in ScriptedModel.from_file(script).responses:
        for call in r.get("tool_calls", []):
            if call["name"] == "shell":
                proc = _shell(call["input"]["command"], repo)
                assert proc.returncode == 0, f"{call['input']['command']}\n{proc.stderr}"
                outputs.append(proc.stdout)
    text = "\n".join(outputs)
    expected = {
        "test-writer": ["build file: pyproject.toml", "tests/test_app.py", "test files: 1"],
        "docs-fixer": ["README.md", "doc files: 1", "docs last changed: 2"],
        "todo-triager": ["src/app.py:2:", "TODO-style comments: 1", "no TODO.md yet"],
        "release-notes": ["no RELEASE_NOTES.md yet"],
    }
    for snippet in expected[script.parent.name]:
        assert snippet in text, snippet
    assert git(repo, "status", "--porcelain") == "", "a dry run changes nothing"


def test_demo_script_makes_one_commit(tmp_path: Path) -> None:
    """Replay the demo's tool calls by hand (shell in bash, edit's create as a file write)."""
    repo = make_repo(tmp_path / "repo")
    memory: dict[str, str] = {}
    for r in ScriptedModel.from_file(paths.SHIPPED_BOTS / "demo" / "script.json").responses:
        (call,) = r["tool_calls"]
        args = call["input"]
        if call["name"] == "shell":
            assert _shell(args["command"], repo).returncode == 0, args["command"]
        elif call["name"] == "edit":
            (repo / args["path"]).write_text(args["file_text"])
        elif call["name"] == "memory":
            memory[args["key"]] = args["value"]
    assert git(repo, "log", "-1", "--format=%s") == "Add HELLO_FROM_OPENBOT.md (openbot demo)"
    assert git(repo, "show", "--name-only", "--format=", "HEAD") == "HELLO_FROM_OPENBOT.md"
    assert git(repo, "status", "--porcelain") == ""
    assert list(memory) == ["demo-greeting"]


def test_scripts_are_tidy_json() -> None:
    for script in SCRIPTS:
        data = json.loads(script.read_text())
        assert set(data) == {"responses"}, script
