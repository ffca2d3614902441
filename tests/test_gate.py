"""openbot/gate.py itself: the rule a step is declared against, the argv a sandboxed step accepts, the
environment every step's process gets, and docs/SANDBOX.md's table of steps."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openbot import gate
from openbot.envpolicy import NEVER
from openbot.gate import Confined, From, GateError, Net, Secrets, Step, Walls
from openbot.sandbox import SandboxPolicy

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "render_steps.py"
MODEL_KEYS = {**dict.fromkeys(NEVER, "sk-model"), "ANTHROPIC_API_KEY": "sk-ant-x", "OPENAI_API_KEY": "sk-oai"}


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """openbot's environment holds the model keys and two secret-looking variables of the user's."""
    for k, v in {**MODEL_KEYS, "GITHUB_TOKEN": "ghp-x", "DEPLOY_SECRET": "s3", "TRACKER_KEY": "k"}.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("PLAIN", "kept")
    yield


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """What each process start was given (argv, env), none of them really started."""
    seen: list[dict[str, Any]] = []

    def record(argv: list[str], *args: Any, env: dict[str, str], **kwargs: Any) -> None:
        seen.append({"argv": argv, "env": env})

    monkeypatch.setattr(subprocess, "run", record)
    monkeypatch.setattr(subprocess, "Popen", record)
    monkeypatch.setattr(os, "posix_spawnp", lambda path, argv, env, **kw: record(argv, env=env))
    monkeypatch.setattr(os, "execvpe", lambda path, argv, env: record(argv, env=env))
    return seen


def test_a_sandboxed_step_refuses_a_plain_list() -> None:
    with pytest.raises(GateError, match="agent.command runs inside the walls"):
        gate.run(gate.AGENT_COMMAND, ["true"])
    with pytest.raises(GateError, match="not confined"):
        gate.popen(gate.VERIFY_CHECK, ["true"])
    with pytest.raises(GateError, match="not confined"):
        gate.stdio_server(gate.MCP_SERVER, ["true"], env={}, cwd=None, errlog=sys.stderr)
    # what the sandbox made runs (danger-full-access: the command itself, marked)
    assert gate.run(gate.AGENT_COMMAND, SandboxPolicy.unconfined().wrap(["true"])).returncode == 0


def test_an_undeclared_step_starts_nothing() -> None:
    made_up = Step("made.up", "declared nowhere", (From.OPENBOT,), Walls.BESIDE)
    with pytest.raises(GateError, match="never declared"):
        gate.run(made_up, ["true"])


@pytest.mark.parametrize(
    "walls, net, secrets",
    [
        (Walls.BESIDE, Net.NONE, Secrets.NONE),
        (Walls.SANDBOX, Net.OPEN, Secrets.NONE),
        (Walls.SANDBOX, Net.NONE, Secrets.NAMED),
        (Walls.SANDBOX, Net.BOT, Secrets.MODEL),
        (Walls.SANDBOX, Net.NONE, Secrets.USER),
    ],
)
def test_code_from_the_agent_beside_the_walls_fails_at_declaration(
    walls: Walls, net: Net, secrets: Secrets
) -> None:
    with pytest.raises(AssertionError, match="runs inside the walls"):
        Step("x.agent", "the agent's code", (From.USER, From.AGENT), walls, net, secrets)
    Step("x.agent", "the agent's code", (From.AGENT,), Walls.SANDBOX, Net.BOT)  # the one line it may take


def test_model_keys_reach_no_step_but_openbots_own_run(keys: None, started: list[dict[str, Any]]) -> None:
    """Inherited or handed over, the model keys are in no process's environment but `openbot run`'s."""
    given = {**MODEL_KEYS, "PLAIN": "kept"}
    for s in gate.steps():
        argv = Confined(["true"]) if s.walls is Walls.SANDBOX else ["true"]
        for env in (None, given):
            gate.run(s, argv, env=env)
            gate.popen(s, argv, env=env)
            gate.spawn_detached(s, argv, env=env)
            gate.exec_(s, argv, env=env)
    for s, seen in zip([s for s in gate.steps() for _ in range(8)], started, strict=True):
        leaked = sorted(k for k in seen["env"] if k in MODEL_KEYS)
        assert leaked == (sorted(MODEL_KEYS) if s.secrets is Secrets.MODEL else []), s.name
        assert seen["env"]["PLAIN"] == "kept"
    assert [s.name for s in gate.steps() if s.secrets is Secrets.MODEL] == [
        "eval.run",
        "fleet.run",
        "run.attempt",
    ]


def test_secret_looking_names_are_dropped_from_an_inherited_env_unless_named(keys: None) -> None:
    plain = gate.clean_env(gate.GIT, None)
    assert {"GITHUB_TOKEN", "DEPLOY_SECRET", "TRACKER_KEY"} & set(plain) == set()
    assert plain["PLAIN"] == "kept"
    named = gate.clean_env(
        gate.NOTIFY_COMMAND, None, named=["GITHUB_TOKEN", "TRACKER_*", "ANTHROPIC_API_KEY"]
    )
    assert set(named) - set(plain) == {"GITHUB_TOKEN", "TRACKER_KEY"}  # a model key, named, stays out
    # the user's own clone keeps their credentials (an ssh agent, a token), never the model's
    user = gate.clean_env(gate.SKILL_CLONE, None)
    assert {"GITHUB_TOKEN", "DEPLOY_SECRET", "TRACKER_KEY"} <= set(user) and not set(user) & set(MODEL_KEYS)
    with pytest.raises(GateError, match="gets no secrets"):
        gate.clean_env(gate.GIT, None, named=["GITHUB_TOKEN"])


def _table_in(doc: str) -> str:
    return doc.split("<!-- gate-steps -->\n", 1)[1].split("<!-- /gate-steps -->", 1)[0]


def _render_steps() -> Any:
    """scripts/render_steps.py as a module (run in this process: no interpreter started)."""
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import render_steps
    finally:
        sys.path.remove(str(SCRIPT.parent))
    return render_steps


def test_the_sandbox_doc_holds_the_gates_list_of_steps() -> None:
    # after declaring or changing a step: python scripts/render_steps.py
    assert _table_in((ROOT / "docs" / "SANDBOX.md").read_text()) == gate.table()


def test_the_render_script_finds_a_stale_table_and_rewrites_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    render_steps = _render_steps()
    doc = tmp_path / "SANDBOX.md"
    doc.write_text("intro\n<!-- gate-steps -->\n| step | old |\n<!-- /gate-steps -->\nrest\n")
    monkeypatch.setattr(render_steps, "DOC", doc)
    monkeypatch.setattr(sys, "argv", ["render_steps.py", "--check"])
    assert render_steps.main() == 1
    assert "run scripts/render_steps.py" in capsys.readouterr().out
    monkeypatch.setattr(sys, "argv", ["render_steps.py"])
    assert render_steps.main() == 0
    assert doc.read_text() == f"intro\n<!-- gate-steps -->\n{gate.table()}<!-- /gate-steps -->\nrest\n"
    monkeypatch.setattr(sys, "argv", ["render_steps.py", "--check"])
    assert render_steps.main() == 0
    with pytest.raises(ValueError, match="markers"):
        render_steps.rendered("no table here\n")


def test_each_step_names_a_test_file_that_exists() -> None:
    missing = [
        (s.name, s.test) for s in gate.steps() if not s.test.endswith(".py") or not (ROOT / s.test).is_file()
    ]
    assert missing == []
