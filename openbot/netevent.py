"""The `network` event (docs/EVENTS.md): one connection the proxy of a listed network allowed or refused
(openbot/sandbox/proxy.py), reported from the proxy's own threads (EventLog.emit takes a lock)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from openbot.events import Event, EventSink


@dataclass(frozen=True)
class Network(Event):
    type: ClassVar[str] = "network"
    host: str
    port: int
    allowed: bool
    key: str  # the config key whose list decided: network, setup_network, verify_network
    reason: str = ""  # why it was refused (or failed)
    bytes_sent: int = 0
    bytes_received: int = 0


def network_reporter(sink: EventSink) -> Callable[[dict[str, Any]], None]:
    """What the proxy calls for each connection."""
    return lambda fields: sink.emit(Network(**fields))
