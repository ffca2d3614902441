"""What the Models API says about a model (`GET /v1/models/{id}`), cached under OPENBOT_HOME for a day.

Asked at plan time, before anything is created: an unknown or retired model is a usage error (exit 2),
a deprecated one a warning with its dates; `max_input_tokens` sizes the context window, `max_tokens`
caps the output limit, and `capabilities` says whether the API can compact the conversation itself.
When the API cannot be reached at plan time, the run goes on with the defaults (the run's own calls wait
out the outage) and nothing is cached; a name it could not check is said at start, or refused (`_unchecked`).
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from openbot import paths
from openbot.errors import UsageError

if TYPE_CHECKING:
    from openbot.agent.models.anthropic.http import Connection
    from openbot.agent.models.outage import Outage

CACHE_SECS = 24 * 3600


@dataclass(frozen=True)
class ModelFacts:
    id: str
    max_input_tokens: int | None = None
    max_tokens: int | None = None
    lifecycle: str = "active"  # active | deprecated | retired (ModelInfo.lifecycle)
    deprecated_at: str | None = None
    retires_at: str | None = None
    known: bool = True  # False: the lookup could not be made (no facts)
    note: str = ""  # a line for the user about the lookup itself (an OpenAI-compatible server not answering)
    server_compaction: bool = False  # capabilities.context_management.compact_20260112.supported

    @property
    def compaction_window(self) -> int | None:
        """The window, for a model whose API compacts conversations itself; None when it cannot."""
        return (self.max_input_tokens or None) if self.server_compaction else None

    def warning(self) -> str:
        """A line for the user when the model is on its way out, else ""."""
        if self.note:
            return self.note
        if self.lifecycle != "deprecated":
            return ""
        since = f" since {self.deprecated_at[:10]}" if self.deprecated_at else ""
        until = f"; it retires on {self.retires_at[:10]}" if self.retires_at else ""
        return f"model {self.id} is deprecated{since}{until}: move to a current model"


def _cache_file(model: str) -> Path:
    return paths.home() / "cache" / "models" / f"{model.replace('/', '_')}.json"


def _cached(model: str) -> ModelFacts | None:
    path = _cache_file(model)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if time.time() - float(data.pop("fetched_at")) < CACHE_SECS:
            return ModelFacts(**data)
    except (OSError, ValueError, TypeError, KeyError):
        pass  # absent, stale or damaged: ask again
    return None


def _store(facts: ModelFacts) -> None:
    from openbot.files import write_atomic

    try:
        path = _cache_file(facts.id)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps({**asdict(facts), "fetched_at": time.time()}))
    except OSError:
        pass  # a cache that cannot be written only costs a lookup next time


def lookup(model: str, client: Connection | None = None) -> ModelFacts:
    """The model's facts; UsageError (exit 2) when the API does not know the model or it is retired."""
    facts = _cached(model)
    if facts is None:
        facts = _ask(model, client)
        if facts.known:
            _store(facts)
    if facts.lifecycle == "retired":
        raise UsageError(
            f"model {model!r} is retired" + (f" (since {facts.retires_at[:10]})" if facts.retires_at else ""),
            hint='choose a current model, e.g. model = "claude-sonnet-5-5"',
        )
    return facts


def _ask(model: str, client: Connection | None) -> ModelFacts:
    from openbot.agent.models.anthropic.http import ApiError, api_key, reach_hint, shared
    from openbot.agent.models.direct import TransportFailure
    from openbot.agent.models.outage import unresolved

    key = api_key()
    if client is None and not key:
        return ModelFacts(model, known=False)  # the backend says what is missing
    api = client or shared(key)
    try:  # one try; when it fails the run goes on with the defaults
        info = api.call("GET", f"/v1/models/{quote(model, safe='')}", timeout=15)
    except ApiError as e:
        if e.status_code == 404:
            raise UsageError(
                f"unknown model {model!r}: the Models API does not know it",
                hint="check the model name in config.md or --model (e.g. claude-sonnet-5-5)",
            ) from None
        return _unchecked(model, f"HTTP {e.status_code}")  # unavailable now: the run's calls wait it out
    except (TransportFailure, ValueError) as e:
        dns = unresolved(e, api.base_url, reach_hint(api.base_url))
        return _unchecked(model, str(e), dns)
    return ModelFacts(
        id=model,
        max_input_tokens=_int(info.get("max_input_tokens")),
        max_tokens=_int(info.get("max_tokens")),
        lifecycle=str(info.get("lifecycle") or "active"),
        deprecated_at=_text(info.get("deprecated_at")),
        retires_at=_text(info.get("retires_at")),
        server_compaction=_supports_compaction(info),
    )


def _unchecked(model: str, why: str, dns: Outage | None = None) -> ModelFacts:
    """The Models API did not answer, so the name is not checked, and the user is told. A name openbot
    knows runs (its calls wait an outage out; a host that does not resolve is tried a few times). One a
    letter or two from a known name is a typo: exit 2, rather than a night spent on a wrong name; so is
    any other unknown name when the API's host does not resolve (nothing could check it, or run it).
    Otherwise an unknown name runs (a model newer than this openbot) and the API will say."""
    import difflib

    from openbot.agent.models.pricing import PRICES, price_of

    if price_of(model) is not None:
        note = f"could not check model {model!r}: {dns.detail}; {dns.hint}" if dns else ""
        return ModelFacts(model, known=False, note=note)
    known = [name for name in PRICES if name.startswith("claude")]
    close = difflib.get_close_matches(model, known, n=1, cutoff=0.85)
    if close:
        raise UsageError(
            f"could not check model {model!r} (no answer from the Models API); openbot does not know it",
            hint=f"did you mean {close[0]!r}? (a model newer than openbot runs once the API answers)",
        )
    if dns is not None:
        raise UsageError(f"could not check model {model!r}: {dns.detail}", hint=dns.hint)
    note = (
        f"could not check model {model!r} (the Models API did not answer: {why[:120]}) and openbot does"
        " not know the name: the run goes on, and ends if the API does not know it either"
    )
    return ModelFacts(model, known=False, note=note)


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _text(value: object) -> str | None:
    return str(value) if value else None


def _supports_compaction(info: dict[str, object]) -> bool:
    context = _get(_get(info, "capabilities"), "context_management")
    return bool(_get(context, "supported") and _get(_get(context, "compact_20260112"), "supported"))


def _get(value: object, key: str) -> object:
    return value.get(key) if isinstance(value, dict) else None
