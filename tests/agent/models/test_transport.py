"""The API client's transport sets TLS up only for https: a call to a plain http:// server (a local model
server, a loopback stand-in) never loads the certificate store; an https:// API gets httpx2's default,
verified transport, made while the client warms up."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest

from openbot.agent.models.anthropic.http import Connection
from openbot.agent.models.transport import LazyTLSTransport
from openbot.testing.fakeapi import FakeAnthropic, reply


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """The `verify` of every httpx2 transport made (True: the certificate store is loaded)."""
    verified: list[bool] = []
    real = httpx2.HTTPTransport.__init__

    def recording(self: Any, *args: Any, verify: Any = True, **kwargs: Any) -> None:
        verified.append(bool(verify))
        real(self, *args, verify=verify, **kwargs)

    monkeypatch.setattr(httpx2.HTTPTransport, "__init__", recording)
    return verified


def test_a_call_over_plain_http_loads_no_certificates(made: list[bool]) -> None:
    with FakeAnthropic([reply("hello")]) as api:
        connection = Connection("sk-ant-test-0000", api.base_url)
        connection.warm()
        body = {
            "model": "claude-sonnet-5-5",
            "max_tokens": 64,
            "messages": [{"role": "user", "content": "hi"}],
        }
        events = list(connection.stream("/v1/messages", {**body, "stream": True}, timeout=30, betas=[]))
    assert any(e.get("type") == "message_stop" for e in events)
    assert made == [False]


def test_an_https_api_gets_the_verified_default_before_its_first_call(made: list[bool]) -> None:
    transport = LazyTLSTransport()
    transport.ready("https://api.anthropic.com")
    assert made == [True]
    transport.ready("not a url")  # fails where it is used, as before
    assert made == [True]
    transport.close()


def test_each_scheme_gets_its_own_transport_only_https_verified(made: list[bool]) -> None:
    transport = LazyTLSTransport()
    transport.ready("http://127.0.0.1:1")
    transport.ready("https://example.invalid")
    assert made == [False, True]
    transport.close()
