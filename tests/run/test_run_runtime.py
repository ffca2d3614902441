"""`openbot run` on the current Messages API, end to end: the real CLI and SDK against the loopback server.

What is simulated, honestly: the loopback server (`openbot.testing.fakeapi`) stands in for the API; its
tokenizer is characters / 4; its windows are set small so a few calls fill them; "60 s of 529" is 529
answers asking for short waits with `retry-after-ms` (the backoff over a real minute is tested on a
simulated clock in tests/agent/models/test_outage.py); a stall is a server that goes silent for longer
than the wall-time budget.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from openbot import paths
from openbot.testing.fakeapi import (
    FakeAnthropic,
    cut_at_max_tokens,
    last_user_text,
    overloaded,
    refusal,
    reply,
    stall,
)
from tests.helpers import events, git, metadata, run_cli, sessions, walk

KEY = "sk-ant-api03-TESTKEY-do-not-leak-0123456789abcdef"
SUMMARY = "Summary: printed many lines; next, finish."


def claude_bot(name: str, config: str = "") -> None:
    d = paths.bot_home(name)
    d.mkdir(parents=True, exist_ok=True)
    (d / "config.md").write_text(f'+++\nmodel = "claude-sonnet-5-5"\nsleep_secs = 0\n{config}\n+++\nWork.\n')


def run(api: FakeAnthropic, repo: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": api.base_url}
    out = run_cli("run", *args, "--json", cwd=repo, env=env)
    return out.returncode, json.loads(out.stdout or "{}"), out.stderr


def summarizer(body: dict[str, Any]) -> Any:
    if "outgrow the model's context window" in last_user_text(body):
        return reply(SUMMARY, thinking="Summing up.")
    return None


def shell(command: str, n: int) -> dict[str, Any]:
    return {"name": "shell", "input": {"command": command}, "id": f"toolu_{n:03d}"}


def complete(summary: str = "done") -> dict[str, Any]:
    return {"name": "session_complete", "input": {"summary": summary, "action": "review"}, "id": "toolu_end"}


def notices(session: Path, kind: str) -> list[dict[str, Any]]:
    return [e for e in events(session) if e["type"] == "notice" and e["kind"] == kind]


BIG = 'for i in $(seq 120); do echo "line $i of call {n}: lorem ipsum dolor sit amet consectetur"; done'


def test_a_long_run_with_thinking_compacts_append_only_and_completes(repo: Path) -> None:
    claude_bot("long", 'thinking = "adaptive"\nmax_turn_steps = 200\nmax_repeats = 200')
    script = [reply("", [shell(BIG.format(n=n), n)], thinking=f"Call {n}.") for n in range(30)]
    script.append(reply("", [complete()], thinking="Done."))
    with FakeAnthropic(script, respond=summarizer) as api:
        api.models["claude-sonnet-5-5"] = {**api.models["claude-sonnet-5-5"], "max_input_tokens": 25_000}
        api.window = 25_000
        code, result, stderr = run(api, repo, "long")
        bodies = api.bodies
        api.assert_done()
    assert code == 0 and result["status"] == "completed", stderr
    [session] = sessions("long")
    assert len(notices(session, "context_compacted")) >= 2
    assert all(b["system"] == bodies[0]["system"] and b["tools"] == bodies[0]["tools"] for b in bodies)
    after = [b for b in bodies if SUMMARY in json.dumps(b["messages"][0])]
    assert after and all(b["messages"][0]["role"] == "user" for b in after)  # a new segment, not an edit
    convo = next(paths.bot_home("long").glob("workspaces/*/runs/*/conversation.jsonl")).read_text()
    assert '"op": "segment"' in convo and '"toolu_000"' in convo  # the old segment is still on disk


def test_agents_md_changed_mid_run_with_thinking_then_resume(repo: Path) -> None:
    (repo / "AGENTS.md").write_text("Use tabs.\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "agents")
    claude_bot("docs", 'thinking = "adaptive"\nmax_iterations = 2')
    edit = "echo 'Use spaces, never tabs.' > AGENTS.md && git commit -qam 'new rules'"
    script = [
        reply("", [shell(edit, 1)], thinking="Change the rules."),
        reply("Iteration 1 done.", thinking="Done for now."),
        reply("", [shell("cat AGENTS.md", 2)], thinking="Read the new rules."),
        reply("Iteration 2 done.", thinking="Done again."),
    ]
    with FakeAnthropic(script) as api:
        code, first, stderr = run(api, repo, "docs")
        assert code == 3 and first["status"] == "limit", stderr
        api.add(reply("", [complete("resumed")], thinking="Resume."))
        code, second, stderr = run(api, repo, "docs", "--resume", first["run_id"])
        bodies = api.bodies
        api.assert_done()
    assert code == 0 and second["status"] == "completed", stderr
    assert len({json.dumps(b["system"]) for b in bodies}) == 1  # one system prompt, resume included
    assert "Use tabs." in bodies[0]["system"][0]["text"]
    iteration_2 = last_user_text(bodies[2])
    assert "# Changes since this run started" in iteration_2 and "Use spaces, never tabs." in iteration_2
    # every earlier message went back byte for byte (markers aside): the server checked each signature
    for before, after in zip(bodies, bodies[1:], strict=False):
        n = len(before["messages"]) - 1
        strip = [
            {k: v for k, v in b.items() if k != "cache_control"}
            for m in after["messages"][:n]
            for b in m["content"]
        ]
        assert strip == [
            {k: v for k, v in b.items() if k != "cache_control"}
            for m in before["messages"][:n]
            for b in m["content"]
        ]


def test_a_max_tokens_cut_inside_an_edit_leaves_the_file_untouched(repo: Path) -> None:
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "calc")
    claude_bot("cut", "max_output_tokens = 4000")
    fix = {
        "command": "str_replace",
        "path": "calc.py",
        "old_str": "    return a - b\n",
        "new_str": "    return a + b\n",
    }
    edit = {"name": "edit", "input": fix, "id": "toolu_edit"}
    cut_before_new_str = len(json.dumps(fix)) - 30
    script = [cut_at_max_tokens("Fixing.", edit, cut_before_new_str) for _ in range(2)]
    script.append(reply("", [complete("gave up")]))
    with FakeAnthropic(script) as api:
        api.models["claude-sonnet-5-5"] = {**api.models["claude-sonnet-5-5"], "max_tokens": 8000}
        code, result, stderr = run(api, repo, "cut")
        bodies = api.bodies
    assert code == 0, stderr
    # asked again with more room (up to the model's maximum), then re-asked at the configured limit
    assert [b["max_tokens"] for b in bodies] == [4000, 8000, 4000]
    assert result["wip_commits"] == []  # an edit that ran would have left calc.py changed: a WIP commit
    [session] = sessions("cut")
    assert not [e for e in events(session) if e["type"] == "tool_call" and e["name"] == "edit"]
    assert notices(session, "reply_truncated") and notices(session, "truncated_tool_call")
    assert "nothing in it was run" in last_user_text(bodies[2])


def test_a_refusal_is_recorded_and_its_tool_call_not_run(repo: Path) -> None:
    claude_bot("refuser")
    script = [
        refusal(
            "I can",
            [shell("touch pwned && git add -A && git commit -qm pwned", 1)],
            category="cyber",
            explanation="This request could enable cyber harm.",
        )
    ]
    with FakeAnthropic(script) as api:
        code, result, stderr = run(api, repo, "refuser")
        api.assert_done()
    assert code == 4 and result["status"] == "refused", stderr
    assert "cyber" in result["reason"] and "could enable cyber harm" in result["reason"]
    [session] = sessions("refuser")
    assert metadata(session)["status"] == "refused"
    assert not [e for e in events(session) if e["type"] == "tool_call"]
    [notice] = notices(session, "refusal")
    assert notice["data"]["stop_details"]["category"] == "cyber"
    assert not [p for p in walk(repo.parent, into_git=True) if p.name == "pwned"]


def test_a_minute_of_529_is_waited_out_and_the_run_completes(repo: Path) -> None:
    claude_bot("patient")
    script = [overloaded(retry_after_ms=20) for _ in range(30)] + [reply("", [complete()])]
    with FakeAnthropic(script) as api:
        code, result, stderr = run(api, repo, "patient")
        api.assert_done()
    assert code == 0 and result["status"] == "completed", stderr
    [session] = sessions("patient")
    retries = [e for e in events(session) if e["type"] == "retry"]
    assert len(retries) == 30 and all(e["wait_secs"] == 0.02 for e in retries)


def test_prompt_too_long_is_compacted_and_retried_on_a_fresh_run_and_on_resume(repo: Path) -> None:
    claude_bot("tight", "max_iterations = 1\nmax_repeats = 100")
    script = [reply("", [shell(BIG.format(n=n), n)]) for n in range(6)] + [reply("first done")]
    with FakeAnthropic(script, respond=summarizer) as api:
        api.window = 9_000  # the Models API says 1M: only the 400 tells the truth
        code, first, stderr = run(api, repo, "tight")
        fresh_400s = sum(1 for b in api.bodies if json.dumps(b).count("lorem") > 0)
        assert code == 3 and first["status"] == "limit", stderr
        [session] = sessions("tight")
        assert notices(session, "prompt_too_long") and notices(session, "context_compacted")
        api.window = 3_000  # smaller still: the saved conversation no longer fits
        api.add(reply("", [complete("resumed")]))
        code, second, stderr = run(api, repo, "tight", "--resume", first["run_id"])
        api.assert_done()
    assert fresh_400s and code == 0 and second["status"] == "completed", stderr
    assert notices(sessions("tight")[-1], "prompt_too_long")


def test_a_stall_longer_than_max_minutes_stops_at_the_budget_with_exit_3(repo: Path) -> None:
    claude_bot("stalled", "max_minutes = 0.05")  # 3 s
    with FakeAnthropic([stall(secs=60)]) as api:
        started = time.monotonic()
        code, result, stderr = run(api, repo, "stalled")
        elapsed = time.monotonic() - started
    assert code == 3 and result["status"] == "limit" and "max_minutes" in result["reason"], stderr
    assert elapsed < 30  # stopped at the budget (3 s + start-up), not after the 60 s stall
