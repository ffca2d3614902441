"""Building what the model reads: a stable system prompt and a per-iteration prompt.

Append-only: the system prompt (bot instructions, the repo's AGENTS.md/CLAUDE.md, skills, operating
instructions) is built once when a run starts and kept for the whole run, resumes included — thinking
blocks are bound to it byte for byte. What changes (status, memory, recent sessions, user input, the
task, and AGENTS.md/CLAUDE.md or skills that changed since the run started: `changes_note`) goes into
the iteration's user message, last.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from openbot.config.skills import Skill
from openbot.errors import ConfigError
from openbot.files import read_text_capped
from openbot.state.history import SessionMeta

REPO_DOC_NAMES = ("AGENTS.md", "CLAUDE.md")
REPO_DOC_CAP = 12_000  # characters per file

ACTIONS_TEXT = """\
- `review`: your branch is kept for a human to review and merge (the usual choice).
- `merge`: openbot fast-forwards the base branch to your branch when that is safe and openbot's own check of
  your committed work passed (else: left for review).
- `discard`: your branch is deleted; choose it when nothing worth keeping was produced."""

OPERATING = """\
# How you work (openbot)
- You are an autonomous coding agent. Nobody answers questions during the run: decide, act, and note
  your decisions in commit messages and in your final summary.
- Ship working, committed code: run the project's tests, commit each coherent step on your branch with a
  clear message (`git add -A && git commit -m "..."`). Uncommitted work is saved as a WIP commit at the end,
  but a clean history is your job.
- Tools: {tools}.
- Call `session_complete` with a summary and an action when the task is done or nothing useful is left;
  otherwise just end your turn and you will get another iteration.
- To teach yourself a reusable skill, write a markdown file (YAML frontmatter with `name` and
  `description`, then the instructions) into {skills_dir} — it is loaded into your future sessions.
- session_complete actions:
{actions}"""


# What the operating prompt says of each built-in tool; a bot's `tools` key leaves out the others.
TOOL_LINES = {
    "shell": "`shell` runs a bash command in the working directory (long output is shortened; the full "
    "text is\n  saved to a file whose path is given)",
    "edit": "`edit` views, creates and edits files",
    "memory": "`memory` saves a fact for your\n  future sessions in this project "
    '(`{"action": "set", "key": "...", "value": "..."}`) — save what you learn\n  that the next session '
    "needs (conventions, commands that work, what is left to do)",
    "session_history": "`session_history` lists\n  and pages through your past sessions here "
    '(`{"action": "list"}`, then `{"action": "view",\n  "session_number": N}`)',
    "session_complete": "`session_complete` ends the run with a summary and an action",
}


@dataclass
class PromptParts:
    instructions: str
    skills: list[Skill] = field(default_factory=list)
    repo_root: Path | None = None
    skills_dir: Path | None = None
    tool_text: str = ""  # tool_protocol "text": the tools and the call format (agent/textprompt.py)
    tool_names: tuple[str, ...] = tuple(TOOL_LINES)  # the built-in tools offered (config key `tools`)
    mode: str = "tools"  # work_mode "edits": no tools, the edit format instead (agent/editprompt.py)


def repo_docs(root: Path | None) -> list[tuple[str, str]]:
    """(name, text) of the repo's AGENTS.md/CLAUDE.md, each cut at REPO_DOC_CAP characters.

    The agent can write these files: one that is a link out of the repository (`/proc/self/environ` holds
    the API key), not a regular file (a FIFO would block) or not readable is left out, and the prompt says
    so. Only the bytes that can become REPO_DOC_CAP characters are read, however large the file is."""
    docs: list[tuple[str, str]] = []
    if root is None:
        return docs
    for name in REPO_DOC_NAMES:
        try:
            text, cut = read_text_capped(root / name, root=root, limit=4 * REPO_DOC_CAP, errors="replace")
        except FileNotFoundError:
            continue
        except ConfigError as e:
            reason = e.message.removeprefix(f"{root / name}: ")
            docs.append((name, f"[openbot did not read {name}: {reason}]"))
            continue
        if cut or len(text) > REPO_DOC_CAP:
            text = text[:REPO_DOC_CAP] + f"\n[... {name} cut at {REPO_DOC_CAP} characters]"
        docs.append((name, text.strip()))
    return docs


def system_prompt(parts: PromptParts) -> str:
    sections = ["# Your instructions\n" + (parts.instructions.strip() or "(no instructions given)")]
    for name, text in repo_docs(parts.repo_root):
        sections.append(f"# The repository's {name}\n{text}")
    if parts.skills:
        lines = ["# Skills"]
        for s in parts.skills:
            head = f"## Skill: {s.name}" + (f" — {s.description}" if s.description else "")
            lines.append(f"{head}\n{s.body.strip()}")
        sections.append("\n\n".join(lines))
    if parts.mode == "edits":
        from openbot.agent.editprompt import OPERATING as EDITS

        return "\n\n".join([*sections, EDITS]) + "\n"
    skills_dir = parts.skills_dir or "(skills are not writable in this run)"
    tools = "; ".join(TOOL_LINES[n] for n in TOOL_LINES if n in parts.tool_names)
    sections.append(OPERATING.format(skills_dir=skills_dir, actions=ACTIONS_TEXT, tools=tools))
    if parts.tool_text:
        sections.append(parts.tool_text)
    return "\n\n".join(sections) + "\n"


@dataclass
class IterationState:
    project: str
    session_number: int
    branch: str = ""
    base: str = ""
    workdir: Path | None = None
    isolated: bool = True
    memory: dict[str, str] = field(default_factory=dict)
    recent: list[SessionMeta] = field(default_factory=list)
    user_input: list[str] = field(default_factory=list)
    task: str = ""
    iteration: int = 1
    max_iterations: int = 0
    changes: str = ""  # changes_note(): instructions that changed since the system prompt was built
    verify: tuple[str, ...] = ()  # the commands openbot checks the committed work with at session_complete


def iteration_prompt(st: IterationState) -> str:
    limit = f" of {st.max_iterations}" if st.max_iterations else ""
    status = [
        f"- project: {st.project}",
        f"- session number: {st.session_number} (iteration {st.iteration}{limit} of this run)",
        f"- working directory: {st.workdir}" if st.workdir else "",
    ]
    if st.isolated and st.branch:
        status.append(
            f"- you are in an isolated git worktree on branch `{st.branch}` (created from `{st.base}`); "
            "commit your work on this branch. The user's own checkout is not affected."
        )
    elif st.branch:
        status.append(
            f"- you are working directly in the user's checkout, on branch `{st.branch}`; be careful."
        )
    if st.verify:
        checks = ", ".join(f"`{c}`" for c in st.verify)
        status.append(
            f"- before session_complete is accepted, openbot runs {checks} on a clean checkout of your "
            "committed work (no network; uncommitted changes are not part of it): run them yourself first"
        )
    out = ["# Status", "\n".join(s for s in status if s)]
    out.append("# Memory (saved by you in earlier sessions)")
    out.append("\n".join(f"- {k}: {v}" for k, v in st.memory.items()) or "(empty)")
    out.append("# Recent sessions")
    if st.recent:
        out.append(
            "\n".join(
                f"- session {m.session_number} ({m.started_at[:16]}, {m.status}"
                + (f", {m.action}" if m.action else "")
                + f"): {m.response_summary or m.prompt_summary or '(no summary)'}"
                for m in reversed(st.recent)
            )
        )
    else:
        out.append("(none: this is the first session)")
    if st.changes:
        out.append(st.changes)
    if st.user_input:
        out.append("# Input from the user\n" + "\n".join(st.user_input))
    out.append("# Task\n" + (st.task.strip() or "Carry on with your instructions."))
    return "\n\n".join(out) + "\n"


def instructions_snapshot(parts: PromptParts) -> dict[str, str]:
    """The parts of the system prompt that can change during a run: repo docs and skills, by name."""
    snap = {name: text for name, text in repo_docs(parts.repo_root)}
    for s in parts.skills:
        snap[f"skill {s.name}"] = (f"{s.description}\n\n" if s.description else "") + s.body.strip()
    return snap


def changes_note(started: dict[str, str], now: dict[str, str]) -> str:
    """What changed in the repo docs and skills since the run's system prompt was built, as a prompt
    section ("" when nothing did). The system prompt itself is never rebuilt mid-run."""
    lines: list[str] = []
    for name in sorted(set(started) | set(now)):
        before, after = started.get(name), now.get(name)
        if before == after:
            continue
        what = name if name.startswith("skill ") else f"the repository's {name}"
        if after is None:
            lines.append(f"## {what} was removed (ignore what your system prompt says of it)")
        else:
            verb = "was added" if before is None else "changed"
            lines.append(f"## {what} {verb}; its current text (it replaces your system prompt's):\n{after}")
    if not lines:
        return ""
    return "# Changes since this run started\n" + "\n\n".join(lines)
