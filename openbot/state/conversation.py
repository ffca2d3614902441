"""The conversation of one run, exactly as sent to the model, persisted append-only for resume.

Stored as `runs/<run_id>/conversation.jsonl`, one message per line, appended (and fsynced) as the
conversation grows, so a crash loses at most the message being written. An assistant reply is written
but not fsynced on its own: the tool results written next are, which makes both durable at once (one
fsync per round trip); a power cut in between loses only the reply, which a resume asks for again.
A message that is extended in place (user input delivered to the newest message, before it is sent) is
rewritten as a `replace_last` record. The file is never rewritten: a `segment` record starts a new
segment after a compaction (what the model sees from then on; earlier segments stay in the file), a
`repaired` record holds the messages after a repair, and a `fixed` record what is sent unchanged for
the whole run, resumes included: the system prompt and the instructions it was built from.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TypedDict, cast

from openbot.files import loads_strict
from openbot.state.messages import Block, Message, ToolResultBlock, blocks_of, text_block


class Fixed(TypedDict):
    """What is sent unchanged for the whole run: the system prompt and what it was built from."""

    system: str
    snapshot: dict[str, str]


def not_run(tool_use_id: str, why: str, partly: bool = False) -> ToolResultBlock:
    """The tool_result for a call that never finished (the API needs one for every tool_use)."""
    text = (
        f"[openbot] no result: {why} while this call was running; it may have run partly — check its effects"
        if partly
        else f"[openbot] not run: {why} before this call was executed"
    )
    return {"type": "tool_result", "tool_use_id": tool_use_id, "is_error": True, "content": text}


def _tool_use_ids(message: Message) -> list[str]:
    if message["role"] != "assistant":
        return []
    return [b["id"] for b in blocks_of(message) if b["type"] == "tool_use"]


def _result_ids(message: Message) -> set[str]:
    return {b["tool_use_id"] for b in blocks_of(message) if b["type"] == "tool_result"}


# What a stored block must have for openbot to read it (other keys are the API's business).
_REQUIRED: dict[str, dict[str, type | tuple[type, ...]]] = {
    "text": {"text": str},
    "tool_use": {"id": str, "name": str, "input": dict},
    "tool_result": {"tool_use_id": str, "content": (str, list)},
    "openai_reasoning": {"item": dict},
}


def _block_ok(block: object) -> bool:
    if not isinstance(block, dict) or not isinstance(block.get("type"), str):
        return False
    return all(isinstance(block.get(k), t) for k, t in _REQUIRED.get(block["type"], {}).items())


def _message_ok(message: object) -> bool:
    content = message.get("content") if isinstance(message, dict) else None
    blocks_ok = isinstance(content, str) or (isinstance(content, list) and all(_block_ok(b) for b in content))
    return isinstance(message, dict) and message.get("role") in ("user", "assistant") and blocks_ok


def _payload_ok(op: str, rec: dict[str, object]) -> bool:
    if op in MESSAGE_OPS:
        return _message_ok(rec.get("message"))
    if op == "repaired":
        messages = rec.get("messages")
        return isinstance(messages, list) and all(_message_ok(m) for m in messages)
    fixed = rec.get("fixed")
    return (
        isinstance(fixed, dict)
        and isinstance(fixed.get("system"), str)
        and isinstance(fixed.get("snapshot"), dict)
    )


MESSAGE_OPS = ("append", "replace_last", "segment")
OPS = (*MESSAGE_OPS, "repaired", "fixed")


def _record(raw: bytes, path: Path, number: int) -> tuple[str, dict[str, object]]:
    """One line of conversation.jsonl as (op, record); ConfigError naming the line otherwise."""
    why = ""
    try:
        rec = loads_strict(raw)
    except ValueError as e:  # UnicodeDecodeError included
        rec, why = None, f"not JSON ({str(e).splitlines()[0]})"
    op = str(rec.get("op", "append")) if isinstance(rec, dict) else ""
    if not why and op not in OPS:
        why = 'not an {"op": ..., "message": ...} record'
    if not why and not _payload_ok(op, rec):
        why = "its message needs a role (user/assistant) and a content (text or a list of typed blocks)"
    if why:
        from openbot.errors import ConfigError

        raise ConfigError(
            f"{path}: line {number} is damaged: {why}",
            hint="restore the file, or start a new run instead of resuming this one",
        )
    assert isinstance(rec, dict)
    return op, rec


class Conversation:
    def __init__(self, path: Path | None = None, redact: Callable[[str], str] = lambda s: s) -> None:
        self.path = path
        self.redact = redact
        self.messages: list[Message] = []
        self.fixed: Fixed | None = None

    @classmethod
    def load(cls, path: Path, redact: Callable[[str], str] = lambda s: s) -> Conversation:
        """Read a saved conversation; a damaged one is a ConfigError (exit 2), never replaced by an empty one.

        Only a torn last line (a crash mid-write) is dropped: everything before it was fsynced whole."""
        conv = cls(path, redact)
        from openbot.events import truncate_torn_tail

        check_file(path)  # before the torn tail is cut: a damaged file is refused as it is, never changed
        truncate_torn_tail(path)  # a crash mid-write: the next append must start on its own line
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return conv
        for number, raw in enumerate(data.splitlines(), 1):
            op, rec = _record(raw, path, number)
            # `_record` checked each message's shape (and the fixed record's): from here on they are typed.
            if op == "replace_last" and conv.messages:
                conv.messages[-1] = cast(Message, rec["message"])
            elif op == "segment":
                conv.messages = [cast(Message, rec["message"])]
            elif op == "repaired":
                conv.messages = cast(list[Message], rec["messages"])
            elif op == "fixed":
                conv.fixed = cast(Fixed, rec["fixed"])
            else:
                conv.messages.append(cast(Message, rec["message"]))
        if conv.repair():
            # Appended, not rewritten: earlier segments and the fixed system prompt stay in the file.
            conv._write({"op": "repaired", "messages": conv.messages})
        return conv

    def repair(self) -> bool:
        """Give every tool_use a tool_result: a run killed mid-tool (SIGKILL, a crash) leaves calls
        unanswered, and the API rejects such a conversation on every later request."""
        msgs, changed = self.messages, False
        for i in range(len(msgs) - 1, -1, -1):
            ids = _tool_use_ids(msgs[i])
            if not ids:
                continue
            nxt = msgs[i + 1] if i + 1 < len(msgs) else None
            answered = _result_ids(nxt) if nxt is not None and nxt["role"] == "user" else set()
            missing: list[Block] = [
                not_run(t, "the run ended", partly=True) for t in ids if t not in answered
            ]
            if not missing:
                continue
            changed = True
            if nxt is not None and nxt["role"] == "user":
                msgs[i + 1] = {"role": "user", "content": [*missing, *blocks_of(nxt)]}
            else:
                msgs.insert(i + 1, {"role": "user", "content": missing})
        return changed

    def _write(self, record: dict[str, object], sync: bool = True) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        line = self.redact(json.dumps(record, ensure_ascii=False)) + "\n"
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode())
            if sync:
                os.fsync(fd)
        finally:
            os.close(fd)

    def append(self, message: Message) -> None:
        self.messages.append(message)
        self._write({"op": "append", "message": message}, sync=message["role"] != "assistant")

    def set_fixed(self, system: str, snapshot: dict[str, str]) -> None:
        """Record the run's system prompt (and what it was built from) once; resumes send it unchanged."""
        self.fixed = {"system": system, "snapshot": snapshot}
        self._write({"op": "fixed", "fixed": self.fixed})

    def start_segment(self, first: Message) -> None:
        """Continue in a new segment that begins with `first` (a compaction); nothing earlier is changed."""
        self.messages = [first]
        self._write({"op": "segment", "message": first})

    def add_user_text(self, text: str) -> None:
        """Add text for the model: to the newest user message if there is one (roles must alternate)."""
        block = text_block(text)
        if self.messages and self.messages[-1]["role"] == "user":
            self.messages[-1] = {"role": "user", "content": [*blocks_of(self.messages[-1]), block]}
            self._write({"op": "replace_last", "message": self.messages[-1]})
        else:
            self.append({"role": "user", "content": [block]})


def check_file(path: Path) -> None:
    """Validate a saved conversation without changing it (a torn last line is allowed: `load` drops it);
    but a file that is only a torn line holds no conversation to resume: refused, never started afresh."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return
    if data and b"\n" not in data:
        from openbot.errors import ConfigError

        raise ConfigError(
            f"{path}: damaged: one unfinished line ({len(data)} bytes) and no whole record",
            hint="restore the file, or start a new run instead of resuming this one",
        )
    for number, raw in enumerate(data[: data.rfind(b"\n") + 1].splitlines(), 1):
        _record(raw, path, number)
