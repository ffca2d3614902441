"""Every key a bot's config.md may set: one `BotConfig` field each, with its default, a one-line doc and
what it allows (choices, a number range). Adding a key is adding a field here; `botconfig` validates them.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from openbot.sandbox import MODES as SANDBOX_MODES

DEFAULT_MODEL = "claude-sonnet-5-5"
EFFORTS = ("", "low", "medium", "high", "xhigh", "max")
CACHE_TTLS = ("auto", "5m", "1h")
TOOL_PROTOCOLS = ("auto", "native", "text")
WORK_MODES = ("auto", "tools", "edits")  # openbot/config/workmode.py
# The built-in tools, by the names the model sees (openbot/agent/tools/registry.py builds them).
BUILTIN_TOOLS = ("shell", "edit", "memory", "session_history", "session_complete")


WEEK_SECS = 7 * 24 * 3600


@dataclass(frozen=True)
class Range:
    """The numbers a key allows: `low` (excluded when `above`), up to `high`; said as in messages."""

    low: float = 0
    above: bool = False
    high: float | None = None

    def allows(self, value: float) -> bool:
        low_ok = value > self.low if self.above else value >= self.low
        return low_ok and (self.high is None or value <= self.high)

    def __str__(self) -> str:
        text = f"more than {self.low:g}" if self.above else f"{self.low:g} or more"
        return text if self.high is None else f"{text}, up to {self.high:g}"


NOT_NEGATIVE = Range()


def _f(default: object, doc: str, choices: tuple[str, ...] = (), allowed: Range = NOT_NEGATIVE) -> Any:
    """A BotConfig field; numbers get `allowed` (default: not negative), checked by `validate`."""
    metadata = {"doc": doc, "choices": choices, "range": allowed}
    if isinstance(default, list | dict):
        return field(default_factory=lambda: type(default)(default), metadata=metadata)
    return field(default=default, metadata=metadata)


@dataclass(frozen=True)
class BotConfig:
    description: str = _f("", "One line shown by `openbot bots list`.")
    model: str = _f(
        DEFAULT_MODEL,
        "claude-*, openai:<model>, ollama:<model>, openai-compatible:<model>… (docs/MODELS.md), or "
        "scripted:<path> to replay a script offline.",
    )
    max_iterations: int = _f(10, "Iterations (sessions) per run; 0 means unlimited.")
    # The upper bounds keep time.sleep and subprocess timeouts from overflowing (~292 years is their limit).
    sleep_secs: float = _f(
        30,
        "Pause between iterations; an interactive user can type a line to wake it.",
        allowed=Range(0, high=WEEK_SECS),
    )
    sandbox: str = _f("workspace-write", "What the agent's commands may touch.", SANDBOX_MODES)
    sandbox_fallback: str = _f(
        "error",
        "When the kernel cannot enforce the sandbox: refuse, or run unconfined loudly.",
        ("error", "warn"),
    )
    network: bool | list[str] = _f(
        False,
        "The agent's commands' network in the confined modes: false, true, or a list of hosts and presets"
        ' (["pypi", "github.com"]) reached through openbot\'s proxy only (docs/SANDBOX.md).',
    )
    skip_git_check: bool = _f(False, "Run outside a git repository (no worktree, no branch).")
    env_passthrough: list[str] = _f([], "Extra env names (or PREFIX_* patterns) passed to commands.")
    max_turn_steps: int = _f(
        100, "Model calls per turn before the turn ends; a nudge comes at 80 %.", allowed=Range(1)
    )
    # 1 would call the first tool call of every turn "repeated": 2 is the least that means anything.
    max_repeats: int = _f(
        5,
        "Identical consecutive tool calls that end a turn as stuck (repeats are answered, not run again);"
        " 3 for a small model (docs/MODELS.md).",
        allowed=Range(2),
    )
    command_timeout_secs: float = _f(
        600, "Default timeout of one shell command.", allowed=Range(0, above=True, high=WEEK_SECS)
    )
    max_cost_usd: float = _f(0.0, "Stop the run at this spend in USD; 0 means no limit.")
    max_tokens: int = _f(
        0,
        "Stop the run at this many tokens (input, output, cache writes; not cache reads); 0 means no limit.",
    )
    max_minutes: float = _f(0.0, "Stop the run after this wall time; 0 means no limit.")
    shipped_skills: list[str] = _f([], 'Skills shipped with openbot to include, by name; ["*"] means all.')
    # The model's knobs (openbot.agent.models.base.ModelOptions).
    max_output_tokens: int = _f(
        32_000,
        "Output limit of one model call (thinking counts toward it).",
        allowed=Range(1024, high=300_000),
    )
    effort: str = _f("", 'How much effort the model spends; "" = the model\'s default.', EFFORTS)
    thinking: str = _f("", 'Thinking: "" (the model\'s default), "off", "adaptive", or a budget in tokens.')
    cache_ttl: str = _f(
        "auto",
        "Prompt-cache TTL; auto = 1h when a command timeout or sleep_secs passes 5 minutes.",
        CACHE_TTLS,
    )
    api_patience_minutes: float = _f(
        30,
        "How long an unavailable API (429/529/5xx, cut or stalled streams) is waited out.",
        allowed=Range(0, high=WEEK_SECS / 60),
    )
    stall_timeout_secs: float = _f(
        90,
        "Silence on a model stream longer than this is a stall (the call is re-sent).",
        allowed=Range(1, high=3600),
    )
    fallback_models: list[str] = _f(
        [], "Models the run goes on with, in order, when `model` stays down or refuses (docs/MODELS.md)."
    )
    first_token_timeout_secs: float = _f(
        0,
        "Silence allowed before a reply's first token; 0 = auto: stall_timeout_secs, plus on Chat Completions"
        " servers the prompt's estimated tokens at 10 a second (a CPU server reads the whole prompt first).",
        allowed=Range(0, high=WEEK_SECS),
    )
    # OpenAI and OpenAI-compatible servers (openbot.agent.models.openai.endpoint; docs/MODELS.md).
    base_url: str = _f(
        "", "The OpenAI or compatible server's URL, e.g. http://gpu:8000/v1 (else OPENAI_BASE_URL)."
    )
    api_key_env: str = _f("", "Env variable holding that server's key (openai: models use OPENAI_API_KEY).")
    context_window: int = _f(0, "The model's window in tokens when its server does not say; 0 = default.")
    price_in_per_mtok: float = _f(0.0, "USD per million input tokens on an OpenAI-compatible server.")
    price_out_per_mtok: float = _f(0.0, "USD per million output tokens on an OpenAI-compatible server.")
    # Sampling, for the servers that take it (docs/MODELS.md, "Sampling"); unset = the server's default.
    temperature: float | None = _f(
        None, "Sampling temperature (Chat Completions, Responses).", allowed=Range(0, high=2)
    )
    top_p: float | None = _f(
        None, "Nucleus sampling (Chat Completions, Responses).", allowed=Range(0, True, 1)
    )
    seed: int | None = _f(None, "Sampling seed, for repeatable runs (Chat Completions servers only).")
    tools: list[str] = _f(
        list(BUILTIN_TOOLS),
        "The built-in tools the model is offered (session_complete always is); fewer tools, a shorter prompt"
        ' for a small model, e.g. ["shell", "edit"]. MCP tools: [mcp_servers.<name>].',
    )
    tool_protocol: str = _f(
        "auto",
        "How the model calls tools: native (the API's tool calls only), text (no tools sent: described in"
        " the prompt, calls read from the reply's text), auto (native offered; a reply that is a call written"
        " as text runs, from models on local or compatible servers only: docs/MODELS.md).",
        TOOL_PROTOCOLS,
    )
    work_mode: str = _f(
        "auto",
        "How the model acts: tools (tool calls), edits (whole files or search/replace blocks in its reply,"
        " applied, committed and checked by openbot), auto (edits for local/compatible servers or a window"
        " of 16k tokens or less, unless tools/tool_protocol are set; else tools). docs/MODELS.md.",
        WORK_MODES,
    )
    server_compaction: bool = _f(
        True,
        "Let the API compact the conversation itself where the model supports it (else openbot's own).",
    )
    # MCP servers and notifications: tables checked by config/mcp.py and config/notify.py (docs/MCP.md).
    mcp_servers: dict[str, object] = _f({}, "MCP servers whose tools the bot may use: [mcp_servers.<name>].")
    notify: list[dict[str, object]] = _f(
        [], "Where to report how a run ended: [[notify]] with url or command."
    )

    # The per-run setup step (openbot/run/setup.py).
    setup: list[str] = _f(
        [],
        "Commands run in the bot's checkout before its first session (every run and resume), confined like"
        " the agent's; a `.venv` they make comes first on the agent's PATH.",
    )
    setup_network: bool | list[str] = _f(
        False,
        "Network for the setup of a new run (not a resume or --no-worktree; the agent follows `network`):"
        " false, true, or a list of hosts and presets.",
    )
    verify_network: list[str] | bool | None = _f(
        None,
        "Hosts the check's setup (verification re-runs setup on the agent's work) may reach: a list, or"
        " false; unset = setup_network's list, if it is one.",
    )
    # Verification (openbot/run/verify.py, docs/VERIFY.md): openbot checks the committed work itself.
    verify: list[str] = _f(
        [],
        "Commands openbot runs on a clean checkout of the branch tip when the bot calls session_complete"
        " (sandboxed, no network); all must pass. $OPENBOT_HOME/verify.toml adds commands for every bot.",
    )
    verify_timeout_secs: float = _f(
        600, "Timeout of each verify command.", allowed=Range(0, above=True, high=WEEK_SECS)
    )
    verify_attempts: int = _f(
        3, "Failed verifications before the run ends `unverified` (exit 5).", allowed=Range(1, high=100)
    )
    attempts: int = _f(
        1,
        "Independent attempts at each run, each in its own run repository; the first verified is kept.",
        allowed=Range(1, high=20),
    )
    attempts_parallel: int = _f(
        0,
        "Attempts at once; 0 = one at a time on a local model server, all at once elsewhere.",
        allowed=Range(0, high=20),
    )
    review: dict[str, object] = _f(
        {},
        "A second model reviews the verified change before it is merged: { model, prompt, attempts }"
        ' (docs/VERIFY.md, "Review").',
    )
    merge_unverified: bool = _f(False, "Let `merge` apply to work that was not verified (shown everywhere).")
    question_unchanged: bool = _f(
        False,
        "Question once a session_complete that left the repository unchanged (memory is not the repository);"
        " on for a small model (docs/MODELS.md).",
    )
    # The WIP commit of what the agent left uncommitted (openbot/git/wip.py): what it leaves out is said.
    wip_max_file_mb: float = _f(10, "A file larger than this (MB) is left out of the WIP commit.")
    wip_max_total_mb: float = _f(100, "The WIP commit takes at most this much (MB) of uncommitted files.")

    @classmethod
    def keys(cls) -> list[str]:
        return [f.name for f in dataclasses.fields(cls)]
