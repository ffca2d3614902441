"""The scripted backend: replays a script of model replies, records requests, fails loudly when exhausted.

Part of the product: tests, the offline demo, and dry runs of a bot config in CI use it (`model =
"scripted:<path>"`, or `openbot run <bot> --model scripted:<path>`); docs/SCRIPTED.md has every tool's
input with an example. Script format (JSON):

    {"responses": [
        {"text": "Let me look.", "tool_calls": [{"name": "shell", "input": {"command": "ls"}}]},
        {"text": "Done.", "tool_calls": [{"name": "session_complete",
                                          "input": {"summary": "…", "action": "review"}}]},
        {"text": "Nothing to do."}
    ]}

A response may also give raw `content` blocks, a `stop_reason` (with `stop_details` for a refusal, as
the API sends them: `{"type": "refusal", "category": …, "explanation": …}`), and `usage`
(`{"input": n, "output": n, "cache_read": n, "cache_write": n}`); without usage, tokens are estimated
from text length so budgets and the live view behave as with a real model. The cost is always 0.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from openbot.agent.models.base import ModelReply, ModelRequest, Usage
from openbot.config.model_names import scripted_name
from openbot.errors import ConfigError, ModelError
from openbot.events import EventSink, TextDelta
from openbot.state.messages import Block, Message, blocks_of, text_block


def _estimate_tokens(obj: object) -> int:
    # Counted like the API would bill it: non-ASCII text costs more than one token a character.
    return max(1, len(json.dumps(obj)) // 4)


def _to_blocks(resp: dict[str, Any], index: int) -> list[Block]:
    if "content" in resp:  # blocks exactly as the API would send them: the script's author vouches
        return cast(list[Block], list(resp["content"]))
    blocks: list[Block] = []
    if resp.get("text"):
        blocks.append(text_block(resp["text"]))
    for n, call in enumerate(resp.get("tool_calls", [])):
        blocks.append(
            {
                "type": "tool_use",
                "id": call.get("id", f"toolu_s{index:04d}_{n}"),
                "name": call["name"],
                "input": call.get("input", {}),
            }
        )
    return blocks


_ITERATION_RE = re.compile(r"\(iteration (\d+)")  # in the per-iteration prompt (openbot.agent.prompt)


def _iteration(messages: list[Message]) -> tuple[int | None, bool]:
    """(the iteration the conversation is in, whether its prompt is the last message), for the hint."""
    for pos in range(len(messages) - 1, -1, -1):
        m = messages[pos]
        for b in blocks_of(m) if m["role"] == "user" else []:
            found = _ITERATION_RE.search(b["text"]) if b["type"] == "text" else None
            if found:
                return int(found.group(1)), pos == len(messages) - 1
    return None, False


def _exhausted_hint(request: ModelRequest) -> str:
    iteration, at_start = _iteration(request.messages)
    if iteration is None:
        return "add responses to the script (see docs/SCRIPTED.md)"
    if at_start and iteration > 1:  # the script covered whole iterations: one fewer would have fit
        return (
            f"add responses to the script (it ran out at the start of iteration {iteration}), "
            f"or set max_iterations = {iteration - 1}"
        )
    return f"add responses to the script (it ran out during iteration {iteration})"


@dataclass
class ScriptedModel:
    responses: list[dict[str, Any]]
    model: str = "scripted"
    source: str = "<script>"
    requests: list[ModelRequest] = field(default_factory=list)
    keep_requests: bool = True  # snapshots for tests; a long CLI dry run keeps only the count (flat memory)
    calls: int = 0
    resumed_from: int | None = None  # replies the conversation already held at the first call

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedModel:
        p = Path(path).expanduser()
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except FileNotFoundError as e:
            raise ConfigError(
                f"scripted model: no script file at {p}", hint="check the path after 'scripted:'"
            ) from e
        except OSError as e:  # a directory, no permission, ...
            raise ConfigError(
                f"scripted model: cannot read the script {p}: {e.strerror}",
                hint="check the path after 'scripted:'",
            ) from e
        except ValueError as e:
            raise ConfigError(f"{p}: the script is not valid JSON: {e}", hint="fix the JSON syntax") from e
        responses = data.get("responses") if isinstance(data, dict) else None
        if not isinstance(responses, list) or not all(isinstance(r, dict) for r in responses):
            raise ConfigError(
                f"{p}: a script needs a 'responses' list of objects", hint="see docs/SCRIPTED.md"
            )
        for i, r in enumerate(responses):
            for call in r.get("tool_calls", []):
                if not isinstance(call, dict) or "name" not in call:
                    raise ConfigError(f"{p}: responses[{i}].tool_calls needs objects with a 'name'")
        return cls(responses=responses, model=scripted_name(p), source=str(p), keep_requests=False)

    @property
    def remaining(self) -> int:
        return len(self.responses) - self.calls

    def complete(self, request: ModelRequest, sink: EventSink) -> ModelReply:
        if self.calls == 0 and self.resumed_from is None:
            # A resumed run's conversation holds the replies its earlier invocations got: the script goes
            # on after them instead of replaying from its start; one with nothing left there was written
            # for the resume and starts from its beginning (docs/SCRIPTED.md).
            held = sum(1 for m in request.messages if m.get("role") == "assistant")
            self.resumed_from = held if held < len(self.responses) else 0
            self.calls = self.resumed_from
        index = self.calls
        if index >= len(self.responses):
            n = len(self.responses)
            raise ModelError(
                f"scripted model {self.source}: called {index + 1} times but the script has only "
                f"{n} response{'' if n == 1 else 's'}",
                hint=_exhausted_hint(request),
            )
        self.calls += 1
        if self.keep_requests:  # a snapshot: the caller goes on mutating its message list
            self.requests.append(
                ModelRequest(
                    request.system,
                    list(request.tools),
                    json.loads(json.dumps(request.messages)),
                    request.max_tokens,
                )
            )
        resp = self.responses[index]
        blocks = _to_blocks(resp, index)
        for b in blocks:
            if b["type"] == "text":
                sink.emit(TextDelta(text=b["text"]))
        u = resp.get("usage") or {}
        usage = Usage(
            input_tokens=int(u.get("input", _estimate_tokens([request.system, request.messages]))),
            output_tokens=int(u.get("output", _estimate_tokens(blocks))),
            cache_read_tokens=int(u.get("cache_read", 0)),
            cache_write_tokens=int(u.get("cache_write", 0)),
        )
        stop = resp.get("stop_reason") or (
            "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
        )
        details = resp.get("stop_details")
        return ModelReply(
            content=blocks,
            stop_reason=stop,
            usage=usage,
            model=self.model,
            stop_details=details if isinstance(details, dict) else None,
        )
