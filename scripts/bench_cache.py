"""Prompt-cache hit rate of the Anthropic backend over one 16-call turn, against the loopback API server.

The real backend (its own HTTP client) sends a growing tool-use conversation (a ~6k-token system prompt,
the real tool specs, each call adding an assistant tool_use and a user tool_result of a few hundred
tokens) to
`openbot.testing.fakeapi.FakeAnthropic`, whose cache simulation reports what the API would read from and
write to its prompt cache. Prints a markdown table and the input cost with caching relative to none.

Usage: python scripts/bench_cache.py [calls] [model]
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from openbot.agent.models.anthropic.backend import AnthropicModel  # noqa: E402
from openbot.agent.models.base import ModelRequest, ToolSpec, Usage  # noqa: E402
from openbot.agent.models.pricing import cost_usd  # noqa: E402
from openbot.events import NullSink  # noqa: E402
from openbot.testing.fakeapi import FakeAnthropic, reply  # noqa: E402

SYSTEM_CHARS = 24_000  # ~6k tokens at 4 characters per token
RESULT_CHARS = 1_600  # ~400 tokens of tool output per call


def tool_specs() -> tuple[str, list[ToolSpec]]:
    try:
        from openbot.agent.tools.registry import default_tools, tool_specs

        return "openbot.agent.tools.registry", tool_specs(default_tools())
    except ImportError:  # the registry is not there yet: a representative pair
        obj = {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}
        return "stand-ins", [
            ToolSpec("shell", "Run a shell command in the worktree.", obj),
            ToolSpec("session_complete", "End the session.", {"type": "object", "properties": {}}),
        ]


def system_prompt() -> str:
    """Real prose (the project's docs) repeated to ~6k tokens, as a bot's instructions and skills would be."""
    docs = "\n\n".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs").glob("*.md")))
    text = docs or "Work carefully, run the tests, commit small steps. "
    return (text * (SYSTEM_CHARS // len(text) + 1))[:SYSTEM_CHARS]


def tool_round(step: int) -> list[dict[str, Any]]:
    call_id = f"toolu_{step:02d}"
    output = "".join(f"src/module_{step}_{n}.py:{n * 7}: def handler_{n}(request): ...\n" for n in range(60))
    return [
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": f"Step {step}: looking at the handlers."},
                {
                    "type": "tool_use",
                    "id": call_id,
                    "name": "shell",
                    "input": {"command": f"grep -rn handler src/{step}"},
                },
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": call_id, "content": output[:RESULT_CHARS]}],
        },
    ]


def run(calls: int, model: str) -> list[Usage]:
    from openbot.agent.models.anthropic.http import Connection

    messages: list[dict[str, Any]] = [{"role": "user", "content": "Find and fix the failing handler test."}]
    usages = []
    with FakeAnthropic([reply("ok") for _ in range(calls)]) as api:
        client = Connection("bench-not-a-key", api.base_url)
        backend = AnthropicModel(model, client=client)
        source, specs = tool_specs()
        print(f"{len(specs)} tool specs from {source}; system prompt {SYSTEM_CHARS:,} characters\n")
        request = ModelRequest(system_prompt(), specs, messages)
        for step in range(calls):
            usages.append(backend.complete(request, NullSink()).usage)
            messages.extend(tool_round(step))
        api.assert_done()
    return usages


def input_cost(model: str, u: Usage, cached: bool) -> float:
    if cached:
        usage = Usage(u.input_tokens, 0, u.cache_read_tokens, u.cache_write_tokens)
    else:
        usage = Usage(u.input_tokens + u.cache_read_tokens + u.cache_write_tokens)
    cost = cost_usd(model, usage)
    if cost is None:
        raise SystemExit(f"no known price for {model!r}: pick a model in openbot.agent.models.pricing")
    return cost


def main() -> None:
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 16
    model = sys.argv[2] if len(sys.argv) > 2 else "claude-sonnet-4-6"
    usages = run(calls, model)
    print(f"Prompt cache over one {calls}-call turn ({model}, simulated by openbot/testing/fakeapi.py)\n")
    print("| call | input | cache write | cache read | read share |")
    print("|---:|---:|---:|---:|---:|")
    for n, u in enumerate(usages, 1):
        total = u.input_tokens + u.cache_read_tokens + u.cache_write_tokens
        print(
            f"| {n} | {u.input_tokens:,} | {u.cache_write_tokens:,} | {u.cache_read_tokens:,} "
            f"| {u.cache_read_tokens / total:.3f} |"
        )
    later = usages[1:]
    read = sum(u.cache_read_tokens for u in later)
    total = sum(u.input_tokens + u.cache_read_tokens + u.cache_write_tokens for u in later)
    with_cache = sum(input_cost(model, u, True) for u in usages)
    without = sum(input_cost(model, u, False) for u in usages)
    print(
        f"\nInput tokens read from cache on calls 2..{calls}: {read:,} of {total:,} = {read / total:.3f}"
        " (target >= 0.9)"
    )
    print(
        f"Input cost of the turn: ${with_cache:.4f} with caching, ${without:.4f} without"
        f" = {with_cache / without:.3f}x"
    )


if __name__ == "__main__":
    main()
