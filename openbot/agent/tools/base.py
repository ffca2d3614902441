"""What every tool shares: the context it runs in, its output, and the Tool Protocol."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from openbot.agent.models.base import ToolSpec
from openbot.events import EventSink, NullSink
from openbot.stops import Cancel, Completion

if TYPE_CHECKING:
    from openbot.sandbox import SandboxPolicy
    from openbot.state.history import History
    from openbot.state.memory import MemoryStore


@dataclass
class ToolContext:
    """Everything a tool may touch during one session."""

    workdir: Path
    session_dir: Path
    env: dict[str, str]  # the allowlisted environment for child processes (no secrets)
    memory: MemoryStore | None = None
    history: History | None = None
    sandbox: SandboxPolicy | None = None
    sink: EventSink = field(default_factory=NullSink)
    cancel: Cancel = field(default_factory=Cancel)  # set by the first signal; knows which one
    default_timeout_secs: float = 600.0
    command_count: int = 0
    # Hides secrets in what a tool writes itself (the shell's full-output file); the runner passes
    # Redactor.from_env(os.environ).redact.
    redact: Callable[[str], str] = lambda text: text
    deadline: float | None = None  # time.monotonic() at which the run's wall-time budget ends


@dataclass
class ToolOutput:
    content: str
    is_error: bool = False
    completion: Completion | None = None  # session_complete's: the turn raises `Completed` with it


class ToolFailed(Exception):
    """Raised inside a tool to return an is_error result to the model instead of crashing the turn."""


class Tool(Protocol):
    spec: ToolSpec

    def run(self, input: dict[str, object], ctx: ToolContext, tool_use_id: str) -> ToolOutput: ...
