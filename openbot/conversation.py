"""The conversation of one run, exactly as sent to the model, persisted append-only for resume.

Stored as `runs/<run_id>/conversation.jsonl`, one message per line, appended (and fsynced) as the
conversation grows, so a crash loses at most the message being written. A message that is extended in
place (user input delivered to the newest message) is rewritten as a `replace_last` record.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

Message = dict[str, Any]


class Conversation:
    def __init__(self, path: Path | None = None, redact: Callable[[str], str] = lambda s: s) -> None:
        self.path = path
        self.redact = redact
        self.messages: list[Message] = []

    @classmethod
    def load(cls, path: Path, redact: Callable[[str], str] = lambda s: s) -> Conversation:
        conv = cls(path, redact)
        from openbot.events import read_events  # the same torn-tail-tolerant JSONL reader

        for rec in read_events(path):
            if rec.get("op") == "replace_last" and conv.messages:
                conv.messages[-1] = rec["message"]
            else:
                conv.messages.append(rec["message"])
        return conv

    def _write(self, record: dict[str, Any]) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        line = self.redact(json.dumps(record, ensure_ascii=False)) + "\n"
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode())
            os.fsync(fd)
        finally:
            os.close(fd)

    def append(self, message: Message) -> None:
        self.messages.append(message)
        self._write({"op": "append", "message": message})

    def add_user_text(self, text: str) -> None:
        """Add text for the model: to the newest user message if there is one (roles must alternate)."""
        block = {"type": "text", "text": text}
        if self.messages and self.messages[-1]["role"] == "user":
            last = self.messages[-1]
            content = last["content"]
            if isinstance(content, str):
                content = [{"type": "text", "text": content}]
            self.messages[-1] = {"role": "user", "content": [*content, block]}
            self._write({"op": "replace_last", "message": self.messages[-1]})
        else:
            self.append({"role": "user", "content": [block]})
