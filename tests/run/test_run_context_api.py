"""Server-side compaction through the real CLI and SDK against the loopback server: where the Models API
says the model supports `compact_20260112`, the API compacts the conversation itself and openbot keeps
its history append-only; where the bot turns it off, openbot's own compaction does the work."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from openbot.testing.fakeapi import FakeAnthropic, compaction, last_user_text, reply, wire
from tests.helpers import sessions
from tests.run.test_run_runtime import claude_bot, complete, notices, run, shell, summarizer

WINDOW = 80_000  # the API compacts at 0.75 of it: 60,000 input tokens
FILLER = ": " + "openbot filler " * 2_700  # a no-op command of ~40,000 characters (~10,000 fake tokens)


def script() -> list[Any]:
    # each call its own command: the same call again is answered from its known result, not run (e67bd56)
    calls = [reply("", [shell(f"{FILLER}{n}", n)]) for n in range(9)]
    return [*calls, reply("", [complete()])]


def small_window(api: FakeAnthropic) -> None:
    api.models["claude-sonnet-5-5"] = {**api.models["claude-sonnet-5-5"], "max_input_tokens": WINDOW}
    api.window = WINDOW


def unmarked(messages: list[dict[str, Any]]) -> list[Any]:
    return [[{k: v for k, v in b.items() if k != "cache_control"} for b in m["content"]] for m in messages]


def test_the_api_compacts_and_the_history_stays_append_only(repo: Path) -> None:
    claude_bot("srv", "max_turn_steps = 50\nmax_repeats = 50")
    with FakeAnthropic(script(), respond=summarizer) as api:
        small_window(api)
        code, result, stderr = run(api, repo, "srv")
        bodies, posts = api.bodies, [r for r in api.requests if r.path.startswith("/v1/messages")]
        api.assert_done()
    assert code == 0 and result["status"] == "completed", stderr
    edit = {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 60_000}}
    assert all(b["context_management"] == {"edits": [edit]} for b in bodies)
    assert all("compact-2026-01-12" in r.headers.get("anthropic-beta", "") for r in posts)
    # the API compacted; openbot did not ask for a summary of its own
    assert not any("outgrow the model's context window" in last_user_text(b) for b in bodies)
    compacted = [
        i
        for i, b in enumerate(bodies)
        if any(blk["type"] == "compaction" for m in b["messages"] for blk in m["content"])
    ]
    assert compacted, "no request carried a compaction block back"
    # append-only: every request extends the one before it, the compaction block included, unchanged
    for before, after in zip(bodies, bodies[1:], strict=False):
        n = len(before["messages"])
        assert unmarked(after["messages"][:n]) == unmarked(before["messages"])
    assert all(b["system"] == bodies[0]["system"] and b["tools"] == bodies[0]["tools"] for b in bodies)
    [session] = sessions("srv")
    [notice] = notices(session, "context_compacted")
    assert notice["data"]["server"] is True and notice["data"]["tokens_after"] < 60_000
    # billed: every request's live context (for the compacting one, the summarising pass read all of it,
    # >= 60,000 tokens) plus the compacting request's own pass, made from the summary (`iterations`)
    live = sum(wire.prompt_tokens(compaction.live(b)) for b in bodies)
    tokens = result["tokens"]
    assert (
        tokens["input"] + tokens["cache_read"] + tokens["cache_write"]
        >= live + notice["data"]["tokens_after"]
    )


def test_server_compaction_off_leaves_it_to_openbot(repo: Path) -> None:
    claude_bot("own", "max_turn_steps = 50\nmax_repeats = 50\nserver_compaction = false")
    with FakeAnthropic(script(), respond=summarizer) as api:
        small_window(api)
        code, result, stderr = run(api, repo, "own")
        bodies = api.bodies
    assert code == 0 and result["status"] == "completed", stderr
    assert not any("context_management" in b for b in bodies)
    assert any("outgrow the model's context window" in last_user_text(b) for b in bodies)
    [session] = sessions("own")
    assert all(not n["data"].get("server") for n in notices(session, "context_compacted"))


ACCENTS = "for i in 1 2 3 4 5; do printf 'é%.0s' $(seq 900); echo; done"  # 4,500 non-ASCII characters


def test_the_apis_count_overrules_an_estimate_that_would_compact_too_early(repo: Path) -> None:
    """openbot estimates what was appended since the API last counted, a non-ASCII character as its \\u
    escape (safe, but ~6x this tokenizer's count): past the mark, it asks `count_tokens` before compacting."""
    claude_bot("acc", "max_turn_steps = 50\nmax_repeats = 50")
    calls = [reply("", [shell(f"{ACCENTS} # call {n}", n)]) for n in range(13)]  # each run, not a repeat
    with FakeAnthropic([*calls, reply("", [complete()])], respond=summarizer) as api:
        api.models["claude-sonnet-5-5"] = {**api.models["claude-sonnet-5-5"], "max_input_tokens": 25_000}
        api.window = 25_000
        code, result, stderr = run(api, repo, "acc")
        bodies = api.bodies
        counted = [r for r in api.requests if r.path.startswith("/v1/messages/count_tokens")]
        api.assert_done()
    assert code == 0 and result["status"] == "completed", stderr
    assert counted, "the estimate never passed the mark: the test proves nothing"
    assert max(wire.prompt_tokens(b) for b in bodies) < 25_000 * 0.8  # truly never past the mark
    assert not any("outgrow the model's context window" in last_user_text(b) for b in bodies)
    [session] = sessions("acc")
    assert not notices(session, "context_compacted")
