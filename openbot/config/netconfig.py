"""Network lists in a bot's config and the user's `$OPENBOT_HOME/network.toml`: `network`, `setup_network`
and `verify_network` take true/false or a list of hosts and presets (sandbox/hosts.py); the home file's
lists are the defaults of a bot that sets none. Only these two files name hosts: never the agent's tree.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openbot import paths
from openbot.config.frontmatter import parse_toml, toml_value
from openbot.errors import ConfigError
from openbot.sandbox.hosts import PRESETS, HostPattern, parse_list

if TYPE_CHECKING:
    from openbot.events import EventSink
    from openbot.netevent import Connections
    from openbot.sandbox import SandboxPolicy

HOME_FILE = "network.toml"
KEYS = ("network", "setup_network", "verify_network")
_HINT = (
    'write hosts ("pypi.org", "*.example.com", "localhost:8080") or presets ('
    + ", ".join(PRESETS)
    + '): docs/SANDBOX.md, "Network by name"'
)


def home_file() -> Path:
    return paths.home() / HOME_FILE


def check(values: dict[str, Any], source: str) -> None:
    """Each list is hosts and presets; `verify_network` is never true (the check runs the agent's work)."""
    for key in KEYS:
        value = values.get(key)
        if key == "verify_network" and value is True:
            raise ConfigError(
                f"{source}: key 'verify_network' is true; the check's setup runs the agent's work and gets"
                " listed hosts only",
                hint='list the registries it needs, e.g. verify_network = ["pypi"], or false',
            )
        if isinstance(value, list):
            try:
                parse_list(value)
            except ValueError as e:
                raise ConfigError(f"{source}: key '{key}' has {e}", hint=_HINT) from None


def home_defaults() -> dict[str, Any]:
    """The network keys $OPENBOT_HOME/network.toml sets (checked: a bad one names that file)."""
    path = home_file()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeError) as e:
        raise ConfigError(f"{path}: cannot read it: {e}", hint="fix or remove the file") from None
    values = parse_toml(text, f"{path}: invalid TOML")
    for key, value in values.items():
        if key not in KEYS:
            raise ConfigError(f"{path}: unknown key '{key}'", hint=f"known keys: {', '.join(KEYS)}")
        if not isinstance(value, bool) and not (
            isinstance(value, list) and all(isinstance(v, str) for v in value)
        ):
            raise ConfigError(
                f"{path}: key '{key}' must be true, false or a list of strings, got {toml_value(value)}",
                hint=_HINT,
            )
    check(values, str(path))
    return values


def hosts(value: object) -> tuple[HostPattern, ...] | None:
    """The patterns of a list-valued key; None for true/false/unset."""
    return parse_list([str(v) for v in value]) if isinstance(value, list) else None


def check_list(setup_network: object, verify_network: object, network: object) -> list[str] | None:
    """What the check's setup may reach: `verify_network`, else the setup's list, else the agent's list
    (what the agent reaches anyway); never all (`true`)."""
    for value in (verify_network,) if verify_network is not None else (setup_network, network):
        if isinstance(value, list):
            return [str(v) for v in value]
    return None


def listed(value: object, key: str, policy: SandboxPolicy, net: Connections) -> SandboxPolicy:
    """`policy` with its network the hosts `value` lists, through a proxy that lives as long as the run
    (`net.close`, or openbot's process at the latest); `policy` itself for true/false or unconfined."""
    import atexit

    from openbot.netevent import network_reporter
    from openbot.sandbox.proxy import Proxy

    patterns = hosts(value)
    if patterns is None or not policy.confined:
        return policy
    proxy = Proxy(patterns, key, network_reporter(net.route))
    net.stop_proxy = proxy.close
    atexit.register(proxy.close)
    return policy.through(proxy.path)


@contextlib.contextmanager
def proxied(
    value: object, key: str, policy: SandboxPolicy | None, sink: EventSink
) -> Iterator[SandboxPolicy | None]:
    """`policy` through a proxy to the hosts `value` lists, for the block's duration (a setup's); its
    repeated connections written together at the end (netevent.py)."""
    from openbot.netevent import Coalesce, network_reporter
    from openbot.sandbox.proxy import serving

    patterns = hosts(value)
    if patterns is None or policy is None or not policy.confined:
        yield policy
        return
    coalesced = Coalesce(sink)
    try:
        with serving(patterns, key, network_reporter(coalesced)) as proxy:
            yield policy.through(proxy.path)
    finally:
        coalesced.flush()
