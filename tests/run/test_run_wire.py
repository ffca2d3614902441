"""What real servers send at the edges, end to end through the CLI (issue 25, items 1–4): the loopback
servers send exactly those bytes — raw U+2028/U+2029/U+0085 in JSON frames, streams kept alive by pings
alone, `retry-after: 0` and HTTP-date `retry-after`, and the Chat Completions quirks of Ollama, vLLM and
llama.cpp. Each test fails on the code before the fix (a hang is cut by the CLI's timeout)."""

from __future__ import annotations

import email.utils
import json
import time
from pathlib import Path
from typing import Any

from openbot import paths
from openbot.testing import fakeapi, fakeopenai
from openbot.testing.fakeapi import FakeAnthropic
from openbot.testing.fakeopenai import FakeOpenAI
from tests.helpers import events, git, run_cli, sessions

KEY = "sk-ant-api03-TESTKEY-do-not-leak-0123456789abcdef"
SEPARATORS = "a\u2028b\u2029c\u0085d"  # str.splitlines() breaks at each; JSON may carry them raw

# These tests are of tool calls: the work mode a local model gets by default is edits (test_edit_mode.py).
TOOLS = 'work_mode = "tools"\n'


def bot(name: str, model: str, config: str = "") -> None:
    d = paths.bot_home(name)
    d.mkdir(parents=True, exist_ok=True)
    quiet = "question_unchanged = false"  # scripts that complete with nothing changed: not asked
    head = f'model = "{model}"\nsleep_secs = 0\n{TOOLS}{quiet}\n{config}'
    (d / "config.md").write_text(f"+++\n{head}\n+++\nWork.\n")


def claude(
    api: FakeAnthropic, repo: Path, config: str = "", timeout: float = 120
) -> tuple[int, dict[str, Any], str]:
    bot("claude", "claude-sonnet-5-5", config)
    env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": api.base_url}
    out = run_cli("run", "claude", "--json", cwd=repo, env=env, timeout=timeout)
    return out.returncode, json.loads(out.stdout or "{}"), out.stderr


def local(api: FakeOpenAI, repo: Path, config: str = "") -> tuple[int, dict[str, Any], str]:
    bot("local", "ollama:qwen3-coder", f'base_url = "{api.base_url}"\n{config}')
    env = {"OPENAI_BASE_URL": "", "OPENAI_API_KEY": ""}
    out = run_cli("run", "local", "--json", cwd=repo, env=env)
    return out.returncode, json.loads(out.stdout or "{}"), out.stderr


def complete_call(id: str = "call_end") -> dict[str, Any]:
    return {"name": "session_complete", "input": {"summary": "done", "action": "review"}, "id": id}


def shell(command: str, id: str) -> dict[str, Any]:
    return {"name": "shell", "input": {"command": command}, "id": id}


def retries(bot_name: str) -> list[dict[str, Any]]:
    [session] = sessions(bot_name)
    return [e for e in events(session) if e["type"] == "retry"]


# 1. Line separators raw in a JSON frame


def test_u2028_u2029_u0085_raw_in_a_claude_reply_are_received_at_the_first_attempt(repo: Path) -> None:
    write = shell(f"printf '%s' '{SEPARATORS}' > sep.txt && git add -A && git commit -qm sep", "toolu_1")
    script = [fakeapi.reply(f"Quoting {SEPARATORS}.", [write]), fakeapi.reply("", [complete_call()])]
    with FakeAnthropic(script) as api:
        code, result, stderr = claude(api, repo, "api_patience_minutes = 0.05")
        raw = b"".join(r.raw for r in api.requests)
        api.assert_done()
    assert code == 0 and result["status"] == "completed", stderr
    assert git(repo, "show", f"{result['branch']}:sep.txt") == SEPARATORS
    assert retries("claude") == []
    assert "\u2028".encode() in raw  # the reply went back as it came, raw (the server sends it raw too)


# 2. Keep-alives are liveness, not progress


def test_a_stream_of_pings_alone_is_a_stall_and_is_re_sent(repo: Path) -> None:
    script = [fakeapi.pings_only(secs=90), fakeapi.reply("", [complete_call()])]
    with FakeAnthropic(script) as api:
        code, result, stderr = claude(api, repo, "stall_timeout_secs = 1", timeout=80)
        api.assert_done()
    assert code == 0 and result["status"] == "completed", stderr
    [retry] = retries("claude")
    assert "only keep-alives" in retry["cause"]


def test_max_minutes_holds_during_a_ping_only_stream(repo: Path) -> None:
    with FakeAnthropic([fakeapi.pings_only(secs=300)]) as api:
        code, result, stderr = claude(api, repo, "max_minutes = 0.05\nstall_timeout_secs = 3600", timeout=80)
    assert code == 3 and result["status"] == "limit", stderr
    assert "max_minutes" in result["reason"]


def test_keep_alive_comments_on_a_chat_stream_are_not_progress(repo: Path) -> None:
    script = [fakeopenai.pings_only(secs=90), fakeopenai.reply("", [complete_call()])]
    with FakeOpenAI(script, models={"qwen3-coder": {}}) as api:
        # no extra time for the first token here (a local server's prefill allowance: test_small_models.py)
        code, result, stderr = local(api, repo, "stall_timeout_secs = 1\nfirst_token_timeout_secs = 1")
        api.assert_done()
    assert code == 0 and result["status"] == "completed", stderr
    [retry] = retries("local")
    assert "only keep-alives" in retry["cause"]


# 3. retry-after: never a hot loop; an HTTP date honoured


def test_retry_after_zero_backs_off_instead_of_a_hot_loop(repo: Path) -> None:
    script = [
        fakeapi.http_error(429, headers={"retry-after": "0"}),
        fakeapi.http_error(529, headers={"retry-after-ms": "0", "retry-after": "-1"}),
        fakeapi.reply("", [complete_call()]),
    ]
    with FakeAnthropic(script) as api:
        code, result, stderr = claude(api, repo)
        api.assert_done()
    assert code == 0, stderr
    waits = [r["wait_secs"] for r in retries("claude")]
    assert len(waits) == 2 and all(w >= 0.5 for w in waits), waits


def test_an_http_date_retry_after_is_honoured(repo: Path) -> None:
    error = fakeapi.retry_at(6)
    # The date is fixed now; openbot's start-up is behind it, so the wait openbot reports depends on the
    # machine's load. What does not: the retry arrives no earlier than the date (a backoff of its own,
    # ignoring the date, would come ~1 s after the error), and the wait is never more than asked.
    date = email.utils.parsedate_to_datetime(error.headers["retry-after"]).timestamp()
    date_on_the_monotonic_clock = date - time.time() + time.monotonic()
    with FakeAnthropic([error, fakeapi.reply("", [complete_call()])]) as api:
        code, result, stderr = claude(api, repo)
        api.assert_done()
    assert code == 0, stderr
    [retry] = retries("claude")
    assert 0 < retry["wait_secs"] <= 6, retry
    first, second = [r for r in api.requests if r.path.split("?")[0] == "/v1/messages"]
    assert second.received >= date_on_the_monotonic_clock - 0.05, (first, second, date_on_the_monotonic_clock)


# 4. OpenAI-compatible servers' quirks on Chat Completions


def run_local(repo: Path, *replies: fakeopenai.Reply) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    script = [*replies, fakeopenai.reply("", [complete_call()])]
    with FakeOpenAI(script, models={"qwen3-coder": {}}, chunk_chars=5) as api:
        code, result, stderr = local(api, repo)
        bodies = api.bodies
        api.assert_done()
    assert code == 0 and result["status"] == "completed", stderr
    return result, bodies


def test_tool_arguments_sent_as_a_json_object_are_accepted(repo: Path) -> None:
    r = fakeopenai.reply(
        f"Writing {SEPARATORS}.", [shell("echo ok > ok.txt && git add -A && git commit -qm ok", "c1")]
    )
    r.object_arguments = True  # Ollama
    result, _ = run_local(repo, r)
    assert git(repo, "show", f"{result['branch']}:ok.txt") == "ok"


def test_a_stream_ending_with_done_and_no_finish_reason_is_accepted(repo: Path) -> None:
    r = fakeopenai.reply("", [shell("echo ok > ok.txt && git add -A && git commit -qm ok", "c1")])
    r.no_finish = True
    result, _ = run_local(repo, r)
    assert git(repo, "show", f"{result['branch']}:ok.txt") == "ok"
    assert retries("local") == []


def test_two_parallel_calls_with_neither_index_nor_id_are_two_calls(repo: Path) -> None:
    both = [
        shell("echo one > one.txt", "x"),
        shell("echo two > two.txt && git add -A && git commit -qm two", "y"),
    ]
    r = fakeopenai.reply("", both)
    r.bare_calls = True  # llama.cpp
    result, _ = run_local(repo, r)
    assert git(repo, "show", f"{result['branch']}:one.txt") == "one"
    assert git(repo, "show", f"{result['branch']}:two.txt") == "two"
    [session] = sessions("local")
    assert not [e for e in events(session) if e["type"] == "notice" and e["kind"] == "invalid_tool_input"]


def test_a_reasoning_only_reply_does_not_end_the_turn_with_nothing_done(repo: Path) -> None:
    thought = fakeopenai.Reply(reasoning="I should look at the files first.", reasoning_key="reasoning")
    vllm = fakeopenai.Reply(reasoning="Still thinking.")  # reasoning_content
    result, bodies = run_local(repo, thought, vllm)
    assert len(bodies) == 3  # asked again twice, then the work was done
    told = json.dumps(bodies[1]["messages"][-1])
    assert "no text and no tool call" in told
    assert "I should look" not in json.dumps(bodies[1]["messages"])  # reasoning is never sent back


# 6. Responses API: encrypted reasoning asked for whatever the model is called


def test_a_reasoning_model_with_any_name_gets_its_reasoning_back_under_store_false(repo: Path) -> None:
    work = shell("echo ok > ok.txt && git add -A && git commit -qm ok", "call_1")
    script = [
        fakeopenai.reply("", [work], reasoning="Plan the change."),  # asked without include: asked again
        fakeopenai.reply("", [work], reasoning="Plan the change."),
        fakeopenai.reply("Done.", [complete_call()], reasoning="Check it."),
    ]
    with FakeOpenAI(script, models={"house-reasoner-2": {}}) as api:
        bot("cloud", "openai:house-reasoner-2")
        env = {"OPENAI_API_KEY": "sk-proj-TESTKEY-0123456789abcdef", "OPENAI_BASE_URL": api.base_url}
        out = run_cli("run", "cloud", "--json", cwd=repo, env=env)
        bodies = api.bodies
        api.assert_done()
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert git(repo, "show", f"{result['branch']}:ok.txt") == "ok"
    assert "include" not in bodies[0]
    assert all(b.get("include") == ["reasoning.encrypted_content"] for b in bodies[1:])
    sent = [i for i in bodies[2]["input"] if i.get("type") == "reasoning"]
    assert sent and all(i.get("encrypted_content") for i in sent)


# 5. The 400s a changed request fixes; turns sent back exactly


def test_a_run_resumed_on_another_claude_model_recovers_from_bound_thinking(repo: Path) -> None:
    """Thinking signed for one model's prefix comes back to another: the API's 400 "bound to a different
    conversation" is answered with drop_block (and its beta header), not the end of the run."""
    first = [
        fakeapi.reply(
            "", [shell("echo one > one.txt && git add -A && git commit -qm one", "toolu_1")], thinking="Plan."
        ),
        fakeapi.reply("Iteration done.", thinking="Stop."),
    ]
    with FakeAnthropic(first) as api:
        code, one, stderr = claude(api, repo, "max_iterations = 1")
        assert code == 3 and one["status"] == "limit", stderr
        bot("claude", "claude-opus-5-5", "max_iterations = 1")
        api.add(fakeapi.reply("", [complete_call()]))
        env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": api.base_url}
        out = run_cli("run", "claude", "--json", "--resume", one["run_id"], cwd=repo, env=env)
        resent = api.requests[-1]
        api.assert_done()
    assert out.returncode == 0 and json.loads(out.stdout)["status"] == "completed", out.stderr
    assert resent.body["thinking"]["block_binding"] == {"prefix_mismatch_behavior": "drop_block"}
    assert "thinking-binding-controls-2026-08-01" in resent.headers["anthropic-beta"]
    [retry] = [r for r in retries_of_all("claude") if "bound to a different conversation" in r["cause"]]
    assert retry["wait_secs"] == 0
    assert [n for n in notices_of_all("claude") if n["kind"] == "thinking_dropped"]


def test_echoed_turns_keep_caller_citations_and_empty_text_blocks(repo: Path) -> None:
    cite = {
        "type": "char_location",
        "cited_text": "x",
        "document_index": 0,
        "start_char_index": 0,
        "end_char_index": 1,
    }
    content = [
        {"type": "text", "text": ""},
        {"type": "text", "text": "See the docs.", "citations": [cite]},
        {
            "type": "tool_use",
            "id": "toolu_1",
            "name": "shell",
            "input": {"command": "true"},
            "caller": {"type": "direct"},
        },
    ]
    with FakeAnthropic([fakeapi.Reply(content), fakeapi.reply("", [complete_call()])]) as api:
        code, result, stderr = claude(api, repo)
        sent = api.bodies[1]["messages"][1]["content"]
        api.assert_done()
    assert code == 0, stderr
    assert [{k: v for k, v in b.items() if k != "cache_control"} for b in sent] == content


def test_no_room_for_max_tokens_lowers_it_instead_of_ending_the_run(repo: Path) -> None:
    with FakeAnthropic([fakeapi.reply("", [complete_call()])], window=40_000, output_counts=True) as api:
        code, result, stderr = claude(api, repo, "max_output_tokens = 64000")
        asked = [b["max_tokens"] for b in api.bodies]
        api.assert_done()
    assert code == 0 and result["status"] == "completed", stderr
    assert asked[0] == 64_000 and asked[-1] < 40_000 and len(asked) == 2


def retries_of_all(bot_name: str) -> list[dict[str, Any]]:
    return [e for s in sessions(bot_name) for e in events(s) if e["type"] == "retry"]


def notices_of_all(bot_name: str) -> list[dict[str, Any]]:
    return [e for s in sessions(bot_name) for e in events(s) if e["type"] == "notice"]
