"""The `network` event (docs/EVENTS.md): one connection the proxy of a listed network allowed or refused
(openbot/sandbox/proxy.py), reported from the proxy's own threads (EventLog.emit takes a lock).

Bounded (`Coalesce`): the first connection to each host, port, outcome and reason is an event at once (the
live view shows a refusal as it happens); its repeats are counted and written as one event whose
`connections` says how many, when the window closes (a session's end, a setup's, the run's). Past
MAX_PLACES places in one window, the others are counted together under host `*`. `Tally` adds the
events up for run.json (the digest): every connection counts, coalesced or not.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from openbot.events import Event, EventSink, TeeSink

MAX_PLACES = 50
COUNTS = ("allowed", "refused", "bytes_sent", "bytes_received")


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
    connections: int = 1  # more than 1: repeats of an earlier event's connection, written together


def network_reporter(sink: EventSink) -> Callable[[dict[str, Any]], None]:
    """What the proxy calls for each connection."""
    return lambda fields: sink.emit(Network(**fields))


Place = tuple[str, int, bool, str, str]


class Coalesce:
    """An event sink for `network` events (anything else passes through) that writes repeats together;
    `to` flushes them and sends what follows elsewhere."""

    def __init__(self, sink: EventSink) -> None:
        self.sink, self._lock = sink, threading.Lock()
        self._seen: set[Place] = set()
        self._repeats: dict[Place, list[int]] = {}  # connections, bytes sent, bytes received

    def emit(self, event: Event) -> None:
        if not isinstance(event, Network):
            self.sink.emit(event)
            return
        place = (event.host, event.port, event.allowed, event.key, event.reason)
        with self._lock:
            if place not in self._seen and len(self._seen) >= MAX_PLACES:
                place = ("*", 0, event.allowed, event.key, f"more than {MAX_PLACES} places, counted together")
            if place in self._seen:
                counts = self._repeats.setdefault(place, [0, 0, 0])
                for i, n in enumerate((event.connections, event.bytes_sent, event.bytes_received)):
                    counts[i] += n
                return
            self._seen.add(place)
            sink = self.sink
        sink.emit(event)

    def flush(self) -> None:
        with self._lock:
            repeats, self._repeats, self._seen, sink = self._repeats, {}, set(), self.sink
        for (host, port, allowed, key, reason), (n, sent, received) in repeats.items():
            sink.emit(Network(host, port, allowed, key, reason, sent, received, connections=n))

    def to(self, sink: EventSink) -> None:
        self.flush()
        self.sink = sink


class Tally:
    """An event sink that adds up `network` events: connections allowed and refused, bytes each way."""

    def __init__(self, base: dict[str, int]) -> None:
        self._counts = {k: int(base.get(k, 0)) for k in COUNTS}
        self._lock = threading.Lock()

    def emit(self, event: Event) -> None:
        if isinstance(event, Network):
            with self._lock:
                self._counts["allowed" if event.allowed else "refused"] += event.connections
                self._counts["bytes_sent"] += event.bytes_sent
                self._counts["bytes_received"] += event.bytes_received

    def counts(self) -> dict[str, int]:
        with self._lock:
            return dict(self._counts)


class Connections:
    """A run's connections: the agent's proxy writes to the open session's log (`route.to`), else to the
    run's (`notices`); every sink that takes a proxy's events also feeds `tally`."""

    def __init__(self, notices: EventSink, base: dict[str, int]) -> None:
        self.tally = Tally(base)
        self.run_log = TeeSink(notices, self.tally)
        self.route = Coalesce(self.run_log)
        self.stop_proxy: Callable[[], None] = lambda: None  # the agent's (config/netconfig.py `listed`)

    def close(self) -> None:
        """The agent's proxy stops (it dies with the run); its repeats are written."""
        self.stop_proxy()
        self.route.flush()
