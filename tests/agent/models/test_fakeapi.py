"""The loopback Messages API server: wire format, faults, over-calling, breakpoint limit, cache simulation."""

from __future__ import annotations

import http.client
import json
from typing import Any

import pytest

from openbot.testing.fakeapi import FakeAnthropic, cut, error_event, http_error, reply

EPHEMERAL = {"type": "ephemeral"}


def post(api: FakeAnthropic, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
    host, port = api.base_url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=5)
    conn.request(
        "POST", "/v1/messages", json.dumps(body), {"content-type": "application/json", "x-test": "1"}
    )
    resp = conn.getresponse()
    try:
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def sse(data: bytes) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for frame in data.decode().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in frame.splitlines() if ": " in line)
        if "event" in lines:
            events.append((lines["event"], json.loads(lines["data"])))
    return events


def body(*, stream: bool = False, system: Any = "", messages: Any = None) -> dict[str, Any]:
    b: dict[str, Any] = {
        "model": "m",
        "max_tokens": 10,
        "messages": messages or [{"role": "user", "content": "hi"}],
    }
    if system:
        b["system"] = system
    if stream:
        b["stream"] = True
    return b


def test_streams_text_and_tool_json_in_fragments_and_records_the_request() -> None:
    item = reply("Hello there, world", [{"name": "shell", "input": {"command": "ls -la /tmp"}, "id": "t1"}])
    with FakeAnthropic([item]) as api:
        status, headers, data = post(api, body(stream=True))
    assert status == 200 and headers["content-type"] == "text/event-stream"
    events = sse(data)
    names = [name for name, _ in events]
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    deltas = [d["delta"] for name, d in events if name == "content_block_delta"]
    texts = [d["text"] for d in deltas if d["type"] == "text_delta"]
    fragments = [d["partial_json"] for d in deltas if d["type"] == "input_json_delta"]
    assert "".join(texts) == "Hello there, world" and len(texts) > 1
    assert json.loads("".join(fragments)) == {"command": "ls -la /tmp"} and len(fragments) > 2
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"
    assert api.requests[0].headers["x-test"] == "1" and api.requests[0].body["stream"] is True
    api.assert_done()


def test_non_streaming_reply_is_one_message() -> None:
    with FakeAnthropic([reply("plain")]) as api:
        status, _, data = post(api, body())
    message = json.loads(data)
    assert status == 200 and message["content"] == [{"type": "text", "text": "plain"}]
    assert message["stop_reason"] == "end_turn" and message["usage"]["output_tokens"] >= 1


def test_http_error_has_the_api_shape_and_a_fast_retry_header() -> None:
    with FakeAnthropic([http_error(529)]) as api:
        status, headers, data = post(api, body(stream=True))
    assert status == 529 and headers["retry-after-ms"] == "1"
    assert json.loads(data) == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "fake overloaded_error"},
    }


def test_error_event_comes_after_some_deltas() -> None:
    with FakeAnthropic([error_event("overloaded_error", after=3)]) as api:
        _, _, data = post(api, body(stream=True))
    events = sse(data)
    assert [name for name, _ in events] == [
        "message_start",
        "ping",
        "content_block_start",
        "content_block_delta",
        "error",
    ]
    assert events[-1][1]["error"]["type"] == "overloaded_error"


def test_cut_leaves_the_chunked_body_incomplete() -> None:
    with FakeAnthropic([cut(after=2)]) as api, pytest.raises(http.client.IncompleteRead):
        post(api, body(stream=True))


def test_over_calling_fails_loudly_and_is_flagged() -> None:
    with FakeAnthropic([reply("one")]) as api:
        assert post(api, body())[0] == 200
        api.assert_done()
        status, headers, data = post(api, body())
    assert status == 500 and headers["x-should-retry"] == "false"
    assert "more than the script holds" in json.loads(data)["error"]["message"]
    assert api.overcalled
    with pytest.raises(AssertionError, match="more than scripted"):
        api.assert_done()


def test_unrequested_items_fail_assert_done() -> None:
    with FakeAnthropic([reply("a"), reply("b")]) as api:
        post(api, body())
    with pytest.raises(AssertionError, match="1 scripted items were never requested"):
        api.assert_done()


def test_more_than_four_breakpoints_is_a_400_and_consumes_nothing() -> None:
    system = [{"type": "text", "text": f"part {i}", "cache_control": EPHEMERAL} for i in range(5)]
    with FakeAnthropic([reply("kept")]) as api:
        status, _, data = post(api, body(system=system))
        assert api.remaining == 1
        ok, _, _ = post(api, body(system=system[:4]))
    err = json.loads(data)["error"]
    assert status == 400 and err["type"] == "invalid_request_error" and "Found 5" in err["message"]
    assert ok == 200 and api.remaining == 0


def usage_of(api: FakeAnthropic, b: dict[str, Any]) -> dict[str, int]:
    api.add(reply("ok"))
    return json.loads(post(api, b)[2])["usage"]


def test_cache_simulation_reads_the_longest_marked_prefix_seen_before() -> None:
    system = [{"type": "text", "text": "s" * 4000, "cache_control": EPHEMERAL}]
    first = [{"role": "user", "content": [{"type": "text", "text": "u" * 400, "cache_control": EPHEMERAL}]}]
    with FakeAnthropic() as api:
        u1 = usage_of(api, body(system=system, messages=first))
        u2 = usage_of(api, body(system=system, messages=first))
        # The conversation grows; the old marker moves, the prefix up to it is unchanged.
        grown = [
            {"role": "user", "content": [{"type": "text", "text": "u" * 400, "cache_control": EPHEMERAL}]},
            {"role": "assistant", "content": [{"type": "text", "text": "a" * 400}]},
            {"role": "user", "content": [{"type": "text", "text": "v" * 400, "cache_control": EPHEMERAL}]},
        ]
        u3 = usage_of(api, body(system=system, messages=grown))
        unmarked = usage_of(api, body(system=[{"type": "text", "text": "s" * 4000}]))
    assert u1["cache_read_input_tokens"] == 0 and u1["cache_creation_input_tokens"] > 1000
    assert u1["input_tokens"] == 0
    assert u2["cache_read_input_tokens"] == u1["cache_creation_input_tokens"]
    assert u2["cache_creation_input_tokens"] == 0
    assert u3["cache_read_input_tokens"] == u1["cache_creation_input_tokens"]
    assert 200 < u3["cache_creation_input_tokens"] < 300  # the two new 400-char blocks
    assert unmarked["cache_read_input_tokens"] == unmarked["cache_creation_input_tokens"] == 0
    assert unmarked["input_tokens"] > 1000


def test_cache_is_per_model_and_scripted_usage_wins() -> None:
    system = [{"type": "text", "text": "s" * 4000, "cache_control": EPHEMERAL}]
    with FakeAnthropic() as api:
        usage_of(api, body(system=system))
        other = usage_of(api, {**body(system=system), "model": "other"})
        api.add(reply("fixed", usage={"input_tokens": 7, "output_tokens": 3}))
        fixed = json.loads(post(api, body(system=system))[2])["usage"]
    assert other["cache_read_input_tokens"] == 0
    assert fixed["input_tokens"] == 7 and fixed["output_tokens"] == 3
