"""The Models API lookup: facts, unknown and retired models, deprecation warnings, the cache."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from openbot.agent.models.catalog import lookup
from openbot.errors import UsageError
from openbot.testing.fakeapi import FakeAnthropic


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key-0123456789")
        yield fake


def test_facts_come_from_the_models_api_and_are_cached(api: FakeAnthropic) -> None:
    facts = lookup("claude-haiku-4-5")
    assert (facts.max_input_tokens, facts.max_tokens, facts.lifecycle) == (200_000, 64_000, "active")
    assert lookup("claude-haiku-4-5") == facts and len(api.requests) == 1  # the second came from the cache
    assert api.requests[0].path == "/v1/models/claude-haiku-4-5"


def test_an_unknown_model_is_a_usage_error(api: FakeAnthropic) -> None:
    with pytest.raises(UsageError, match="unknown model 'claude-sonet-5-5'") as info:
        lookup("claude-sonet-5-5")
    assert info.value.exit_code == 2


def test_a_deprecated_model_warns_with_its_dates(api: FakeAnthropic) -> None:
    warning = lookup("claude-opus-4-1").warning()
    assert warning.startswith("model claude-opus-4-1 is deprecated since 2026-06-01")
    assert "it retires on 2027-01-05" in warning


def test_a_retired_model_is_refused(api: FakeAnthropic) -> None:
    api.models["claude-2"] = {"lifecycle": "retired", "retires_at": "2025-07-21T00:00:00Z"}
    with pytest.raises(UsageError, match="'claude-2' is retired"):
        lookup("claude-2")


def test_an_unreachable_api_gives_no_facts_and_caches_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeAnthropic() as fake:
        url = fake.base_url
    monkeypatch.setenv("ANTHROPIC_BASE_URL", url)  # nothing listens there any more
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key-0123456789")
    assert not lookup("claude-haiku-4-5").known
    assert not lookup("claude-haiku-4-5").known  # asked again, not cached
