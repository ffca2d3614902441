"""A `~/.openbot` as the Rust openbot left it, built from that tool's documented layout and source.

Source: github.com/montanaflynn/openbot at commit cf3b7f26051352e8db6c4af275e408d1690b6fe2 —
- docs/ARCHITECTURE.md "Directory Layout": skills/, bots/<name>/{config.md, skills/, workspaces/<slug>/
  {memory.json, history/<session_id>/{metadata.json, events.jsonl}}};
- docs/CONFIG_REFERENCE.md + src/config.rs `Frontmatter`: the keys description, max_iterations, sleep_secs,
  stop_phrase ("Legacy field, currently unused"), model, sandbox, skip_git_check; a config.md without
  frontmatter is all instructions; `bot_memory_path` = bots/<name>/memory.json (the CLI's memory commands
  without --project);
- docs/MEMORY_FORMAT.md + src/memory.rs: memory.json = {"entries": {key: value}} (before commit 5cf6d03 also
  a "history" list of iteration records);
- src/workspace.rs `slug_from_path`: the directory name, lowercased, other characters than [a-z0-9-] '-';
- src/history.rs `SessionRecord` (pretty JSON, chrono RFC 3339 times) and `SessionEvent` (tag "type":
  message {content} — one per streamed delta —, command {command, exit_code, duration_ms}, token_count
  {input_tokens, cached_input_tokens, output_tokens, reasoning_output_tokens, context_window} — the Codex
  thread's running totals); src/runner.rs `history_session_id` = "<codex thread id>-s<N>";
- commit 92922ab src/history.rs `save`: the older one-file record history/<session_id>.json (no events,
  no command_count).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

THREAD = "019c8f2e-5a1b-7c3d-9e4f-0a1b2c3d4e5f"  # a Codex ThreadId (UUID v7)
OLD_THREAD = "019c8a10-1111-7222-8333-944455566677"

ACTIONS = {  # src/runner.rs: what happened to the worktree, in words
    1: "merged openbot/fixer-1771840000 into main",
    3: "review branch openbot/fixer-1771850000\n  git log main..openbot/fixer-1771850000\n"
    "  git merge openbot/fixer-1771850000",
}

RUST_CONFIG = """+++
description = "Fixes flaky tests"
max_iterations = 5
sleep_secs = 0
stop_phrase = "TASK COMPLETE"
model = "{model}"
sandbox = "workspace-write"
skip_git_check = {skip}
+++

Find flaky tests and make them deterministic. Call session_complete when done.
"""

SKILL = """---
name: code-review
description: Review code for correctness
source: obra/superpowers
installed_at: 2026-02-24T05:00:00Z
---
Read the diff twice before commenting.
"""


def _write(path: Path, data: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data)
    return path


def _json(path: Path, data: Any) -> Path:
    return _write(path, json.dumps(data, indent=2))  # serde_json::to_string_pretty


def record(number: int, session_id: str, summary: str, *, new: bool = True) -> dict[str, Any]:
    """A Rust SessionRecord; `new=False` is the older shape without command_count."""
    rec: dict[str, Any] = {
        "session_id": session_id,
        "session_number": number,
        "started_at": f"2026-02-2{number}T10:15:30.123456789Z",
        "duration_secs": 95 + number,
        "model": "gpt-5.3-codex",
        "prompt_summary": "Find flaky tests and make them deterministic.",
        "response_summary": summary,
        "action": ACTIONS.get(number),
        "tokens": {
            "input_tokens": 12000 * number,
            "cached_input_tokens": 8000 * number,
            "output_tokens": 900 * number,
            "reasoning_output_tokens": 300,
            "context_window": 272000,
        },
    }
    if new:
        rec["command_count"] = 2
    return rec


EVENTS = [
    {"type": "message", "content": "Looking at the "},
    {"type": "message", "content": "test suite."},
    {"type": "command", "command": "bash -lc pytest -q", "exit_code": 1, "duration_ms": 2300},
    {
        "type": "token_count",
        "input_tokens": 10000,
        "cached_input_tokens": 6000,
        "output_tokens": 500,
        "reasoning_output_tokens": 100,
        "context_window": 272000,
    },  # fmt: skip
    {"type": "command", "command": "bash -lc git commit -am fix", "exit_code": 0, "duration_ms": 40},
    {
        "type": "token_count",
        "input_tokens": 24000,
        "cached_input_tokens": 16000,
        "output_tokens": 1800,
        "reasoning_output_tokens": 300,
        "context_window": 272000,
    },  # fmt: skip
    {"type": "message", "content": "Fixed the sleep in test_retry."},
]


def session_dir(history: Path, number: int, summary: str, events: list[dict[str, Any]] | None = None) -> Path:
    d = history / f"{THREAD}-s{number}"
    _json(d / "metadata.json", record(number, d.name, summary))
    lines = events if events is not None else EVENTS
    _write(d / "events.jsonl", "".join(json.dumps(e) + "\n" for e in lines))
    return d


def rust_home(home: Path, workspace: str = "app", model: str = "gpt-5.3-codex") -> dict[str, Path]:
    """Bots `fixer` (legacy keys, Codex model, global memory, a workspace `workspace` with memory and both
    history formats), `auditor` (o4-mini, skip_git_check), `notes` (no frontmatter)."""
    bots = home / "bots"
    _write(home / "skills" / "code-review.md", SKILL)
    fixer = bots / "fixer"
    _write(fixer / "config.md", RUST_CONFIG.format(model=model, skip="false"))
    _write(fixer / "skills" / "refactor.md", "---\nname: refactor\ndescription: Small\n---\nOne step.\n")
    _json(fixer / "memory.json", {"entries": {"style": "black, 88 columns", "ci": "GitHub Actions"}})
    ws = fixer / "workspaces" / workspace
    _json(ws / "memory.json", {"entries": {"flaky": "test_retry sleeps 1s", "runner": "pytest -q"}})
    history = ws / "history"
    _json(history / f"{OLD_THREAD}.json", record(1, OLD_THREAD, "Listed the flaky tests.", new=False))
    session_dir(history, 2, "Fixed test_retry.")
    session_dir(history, 3, "Fixed test_timeout.")
    _write(bots / "auditor" / "config.md", RUST_CONFIG.format(model="o4-mini", skip="true"))
    _write(bots / "notes" / "config.md", "Keep NOTES.md up to date.\n")
    return {"home": home, "fixer": fixer, "workspace": ws, "history": history}
