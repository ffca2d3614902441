"""Host patterns: what a list-valued `network`, `setup_network` or `verify_network` names (docs/SANDBOX.md,
"Network by name"). An entry is a host (`pypi.org`), a suffix (`*.github.com`: its subdomains, not itself),
either with `:port` (else ports 80 and 443), or a preset's name. The proxy (proxy.py) matches each
connection against them; config/netconfig.py turns a config's list into them and says what is wrong.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

PRESETS: dict[str, tuple[str, ...]] = {
    "pypi": ("pypi.org", "files.pythonhosted.org"),
    "npm": ("registry.npmjs.org", "registry.yarnpkg.com"),
    "crates": ("crates.io", "index.crates.io", "static.crates.io"),
    "go": ("proxy.golang.org", "sum.golang.org"),
    "github": ("github.com", "api.github.com", "codeload.github.com", "*.githubusercontent.com"),
}
DEFAULT_PORTS = (80, 443)
_LABEL = re.compile(r"^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$")


@dataclass(frozen=True)
class HostPattern:
    host: str  # lower case, no trailing dot; a suffix without its "*."
    port: int | None
    suffix: bool = False

    def matches(self, host: str, port: int) -> bool:
        ports = (self.port,) if self.port is not None else DEFAULT_PORTS
        if port not in ports:
            return False
        return host.endswith("." + self.host) if self.suffix else host == self.host

    @property
    def names_local(self) -> bool:
        """Named explicitly, a loopback or private address may be reached: `localhost`, an IP literal."""
        return not self.suffix and (self.host == "localhost" or ip_literal(self.host) is not None)

    def __str__(self) -> str:
        host = ("*." if self.suffix else "") + (f"[{self.host}]" if ":" in self.host else self.host)
        return host + (f":{self.port}" if self.port is not None else "")


def ip_literal(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def normal_host(host: str) -> str:
    return host.strip().lower().rstrip(".").strip("[]")


def parse_entry(entry: str) -> list[HostPattern]:
    """The patterns one entry stands for; ValueError saying what is wrong with it."""
    if entry in PRESETS:
        return [p for e in PRESETS[entry] for p in parse_entry(e)]
    text, port = entry.strip(), None
    if m := re.fullmatch(r"(.*?)(?::(\d{1,5}))?", text):
        if m.group(2) is not None and (text.startswith("[") or text.count(":") == 1):
            text, port = m.group(1), int(m.group(2))
    if port is not None and not 1 <= port <= 65535:
        raise ValueError(f"port {port} is not between 1 and 65535")
    suffix = text.startswith("*.")
    host = normal_host(text[2:] if suffix else text)
    if ip_literal(host) is not None and not suffix:
        return [HostPattern(str(ip_literal(host)), port)]
    labels = host.split(".")
    if not host or not all(_LABEL.match(label) for label in labels) or (suffix and len(labels) < 2):
        presets = ", ".join(PRESETS)
        raise ValueError(f"not a host, *.suffix (of two labels or more), host:port or preset ({presets})")
    return [HostPattern(host, port, suffix)]


def parse_list(entries: list[str]) -> tuple[HostPattern, ...]:
    """Every entry's patterns, in order, without repeats; ValueError naming the first bad entry."""
    patterns: dict[HostPattern, None] = {}
    for entry in entries:
        try:
            patterns |= dict.fromkeys(parse_entry(entry))
        except ValueError as e:
            raise ValueError(f"entry {entry!r}: {e}") from None
    return tuple(patterns)


def find(patterns: tuple[HostPattern, ...], host: str, port: int) -> HostPattern | None:
    host = normal_host(host)
    return next((p for p in patterns if p.matches(host, port)), None)
