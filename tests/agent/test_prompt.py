"""What the model reads: a stable system prompt and a per-iteration prompt with the changing parts."""

from __future__ import annotations

import os
import re
from pathlib import Path

from openbot.agent.prompt import REPO_DOC_CAP, IterationState, PromptParts, iteration_prompt, system_prompt
from openbot.config.skills import Skill
from openbot.state.history import SessionMeta


def meta(n: int) -> SessionMeta:
    return SessionMeta(f"{n:06d}-x", n, "run", f"2026-11-0{n % 9 + 1}T00:00:00Z", response_summary=f"did {n}")


def test_system_prompt_has_instructions_repo_docs_skills_and_where_to_write_skills(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("agents rules\n" + "x" * (REPO_DOC_CAP + 500))
    (tmp_path / "CLAUDE.md").write_text("claude rules")
    skill = Skill("tdd", "test first", "Write the test first.", tmp_path / "tdd.md", "bot")
    skills_dir = tmp_path / "home" / "bots" / "b" / "skills"
    text = system_prompt(PromptParts("Fix the flaky tests.", [skill], tmp_path, skills_dir))
    assert text.index("Fix the flaky tests.") < text.index("agents rules") < text.index("claude rules")
    assert f"cut at {REPO_DOC_CAP} characters" in text and "x" * (REPO_DOC_CAP + 1) not in text
    assert "## Skill: tdd — test first\nWrite the test first." in text
    assert str(skills_dir) in text and "session_complete" in text


def test_system_prompt_is_byte_stable_while_its_inputs_are() -> None:
    parts = PromptParts("Do it.", [], None, Path("/s"))
    assert system_prompt(parts) == system_prompt(parts)  # no timestamps or counters: cache-friendly


def test_iteration_prompt_carries_the_changing_parts() -> None:
    state = IterationState(
        project="app-1234",
        session_number=7,
        branch="openbot/b-1",
        base="main",
        workdir=Path("/w"),
        memory={"test-command": "pytest -q"},
        recent=[meta(n) for n in range(6, 0, -1)][:5],
        user_input=["please also update the README"],
        task="raise coverage",
        iteration=2,
        max_iterations=5,
    )
    text = iteration_prompt(state)
    assert "session number: 7 (iteration 2 of 5" in text and "openbot/b-1" in text and "`main`" in text
    assert "- test-command: pytest -q" in text
    assert len(re.findall(r"^- session \d", text, re.M)) == 5 and "did 6" in text and "did 1" not in text
    assert text.index("# Input from the user") < text.index("# Task\nraise coverage")


def test_repo_docs_never_follow_a_link_out_of_the_repo_nor_read_past_the_cap(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").symlink_to("/proc/self/environ")  # openbot's environment holds the API key
    (tmp_path / "CLAUDE.md").write_text("claude rules")
    text = system_prompt(PromptParts("Do it.", [], tmp_path, None))
    assert "[openbot did not read AGENTS.md: refused to read: it is a symlink out of" in text
    assert "claude rules" in text
    (tmp_path / "AGENTS.md").unlink()
    os.mkfifo(tmp_path / "AGENTS.md")  # would block a plain read forever
    (tmp_path / "CLAUDE.md").unlink()
    (tmp_path / "CLAUDE.md").symlink_to("big.md")  # a link inside the repo is read
    (tmp_path / "big.md").touch()
    os.truncate(tmp_path / "big.md", 1 << 34)  # sparse 16 GB
    text = system_prompt(PromptParts("Do it.", [], tmp_path, None))
    assert "did not read AGENTS.md: refused to read: it is a FIFO, not a regular file" in text
    assert f"[... CLAUDE.md cut at {REPO_DOC_CAP} characters]" in text and len(text) < 3 * REPO_DOC_CAP
