"""`openbot run` on OpenAI and OpenAI-compatible servers, end to end: the real CLI and the real `openai`
SDK against the loopback stand-in (`openbot.testing.fakeopenai`), in both wire protocols.

What is simulated, honestly: the server (its tokenizer is characters / 4, its prompt cache reads the
longest prefix of items seen before); "a minute of 429/529" is errors asking for short waits; a stall is a
server going silent for longer than `stall_timeout_secs`.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from openbot import paths
from openbot.testing.fakeopenai import FakeOpenAI, Reply, last_user_text, malformed, reply
from tests.helpers import events, git, run_cli, sessions, walk

KEY = "sk-proj-TESTKEY-do-not-leak-0123456789abcdef"
FIX = {"command": "str_replace", "path": "calc.py", "old_str": "return a - b", "new_str": "return a + b"}

# These tests are of tool calls: the work mode a local model gets by default is edits (test_edit_mode.py).
TOOLS = 'work_mode = "tools"\n'


def bot(name: str, model: str, config: str = "") -> None:
    d = paths.bot_home(name)
    d.mkdir(parents=True, exist_ok=True)
    quiet = "question_unchanged = false"  # scripts that complete with nothing changed: not asked
    (d / "config.md").write_text(
        f'+++\nmodel = "{model}"\nsleep_secs = 0\n{TOOLS}{quiet}\n{config}\n+++\nFix calc.py.\n'
    )


def run(
    api: FakeOpenAI, repo: Path, *args: str, env: dict[str, str] | None = None
) -> tuple[int, dict[str, Any], str]:
    base = {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": api.base_url}
    out = run_cli("run", *args, "--json", cwd=repo, env={**base, **(env or {})})
    return out.returncode, json.loads(out.stdout or "{}"), out.stderr


def call(name: str, input: dict[str, Any], id: str) -> dict[str, Any]:
    return {"name": name, "input": input, "id": id}


def shell(command: str, id: str) -> dict[str, Any]:
    return call("shell", {"command": command}, id)


def complete(summary: str = "fixed", id: str = "call_end") -> dict[str, Any]:
    return call("session_complete", {"summary": summary, "action": "review"}, id)


def calc_repo(repo: Path) -> None:
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "calc")


def fix_script(reasoning: str = "") -> list[Reply]:
    return [
        reply("Looking at calc.py.", [shell("cat calc.py", "call_1")], reasoning=reasoning),
        reply("", [call("edit", FIX, "call_2")], reasoning=reasoning),
        reply("", [shell("git commit -qam 'fix add'", "call_3")], reasoning=reasoning),
        reply("Fixed.", [complete()], reasoning=reasoning),
    ]


def notices(session: Path, kind: str) -> list[dict[str, Any]]:
    return [e for e in events(session) if e["type"] == "notice" and e["kind"] == kind]


def test_an_ollama_bot_edits_commits_and_completes_through_split_and_malformed_calls(repo: Path) -> None:
    calc_repo(repo)
    script = fix_script()
    whole = reply("", [shell("git log --oneline | head -1", "call_w")])
    whole.one_chunk_calls = True  # the whole call in one chunk without `index`, as some local servers send
    script[2:2] = [malformed("edit", '{"command": "str_replace", "path": calc.py}'), whole]
    with FakeOpenAI(script, models={"qwen3-coder": {}}, chunk_chars=4) as api:
        bot("local", "ollama:qwen3-coder", f'base_url = "{api.base_url}"')
        code, result, stderr = run(api, repo, "local", env={"OPENAI_BASE_URL": ""})
        bodies = api.bodies
        api.assert_done()
    assert code == 0 and result["status"] == "completed", stderr
    assert git(repo, "show", f"{result['branch']}:calc.py") == "def add(a, b):\n    return a + b"
    assert git(repo, "log", "-1", "--format=%s", result["branch"]) == "fix add"
    [session] = sessions("local")
    [bad] = notices(session, "invalid_tool_input")
    assert "not valid JSON" in bad["data"]["defect"]
    assert "could not be used" in json.dumps(bodies[3]["messages"][-1])  # told, and asked again
    assert all(b["model"] == "qwen3-coder" and "tools" in b for b in bodies)
    assert result["cost_usd"] == 0


def test_an_openai_bot_on_the_responses_api_keeps_reasoning_and_resumes(repo: Path) -> None:
    calc_repo(repo)
    script = fix_script(reasoning="Think about it.")
    first, rest = script[:2] + [reply("Iteration done.", reasoning="Stop here.")], script[2:]
    with FakeOpenAI(first, models={"gpt-5.1": {}}) as api:
        bot("cloud", "openai:gpt-5.1", "max_iterations = 1")
        code, one, stderr = run(api, repo, "cloud")
        assert code == 3 and one["status"] == "limit", stderr
        api.add(*rest)
        code, two, stderr = run(api, repo, "cloud", "--resume", one["run_id"])
        bodies = api.bodies
        api.assert_done()
    assert code == 0 and two["status"] == "completed", stderr
    assert git(repo, "show", f"{two['branch']}:calc.py") == "def add(a, b):\n    return a + b"
    # the resumed run sent every reasoning item back (the server checks each against what it issued)
    resumed = bodies[3]["input"]
    assert sum(1 for i in resumed if i.get("type") == "reasoning") == 3
    assert all(b["store"] is False and b["include"] == ["reasoning.encrypted_content"] for b in bodies)
    convo = next(paths.bot_home("cloud").glob("workspaces/*/runs/*/conversation.jsonl")).read_text()
    assert '"openai_reasoning"' in convo
    assert one["tokens"]["cache_read"] > 0 and two["cost_usd"] > 0  # gpt-5.1 is priced


def test_the_model_key_never_reaches_the_agent_the_events_or_the_transcript(repo: Path) -> None:
    dump = 'env > env.txt; echo "key=$OPENAI_API_KEY"; git add env.txt && git commit -qm env'
    script = [reply("", [shell(dump, "call_1")]), reply("", [complete()])]
    with FakeOpenAI(script, models={"gpt-5.1": {}}) as api:
        bot("a", "openai:gpt-5.1", 'env_passthrough = ["OPENAI_*"]')  # asked for, still never passed
        code, result, stderr = run(api, repo, "a")
        sent = json.dumps(api.bodies)
        auth = [r.headers.get("authorization") for r in api.requests]
    assert code == 0, stderr
    assert f"Bearer {KEY}" in auth  # the key went where it belongs, and nowhere else
    env_file = git(repo, "show", f"{result['branch']}:env.txt")
    assert "OPENAI_API_KEY" not in env_file and KEY not in env_file
    output = next(e for e in events(sessions("a")[0]) if e["type"] == "command")
    assert output["output"].strip() == "key="
    assert KEY not in sent and KEY not in stderr
    for f in walk(paths.home()):  # not rglob: the run's trash (OPENBOT_HOME/trash) is being deleted meanwhile
        if f.is_file():
            with contextlib.suppress(FileNotFoundError):  # gone with the trash meanwhile: not on disk
                assert KEY not in f.read_text(errors="replace"), f
    bot("b", "openai-compatible:coder", 'api_key_env = "MY_LLM"\nenv_passthrough = ["MY_*"]')
    out = run_cli("run", "b", cwd=repo, env={"MY_LLM": "local-server-token-12345"})
    assert out.returncode == 2 and "env_passthrough" in out.stderr and "MY_LLM" in out.stderr


def test_a_custom_key_variable_is_sent_to_its_server_only_and_hidden(repo: Path) -> None:
    token = "local-server-token-12345"
    dump = 'echo "token=$MY_LLM"'
    with FakeOpenAI(
        [reply(f"my token is {token}", [shell(dump, "call_1")]), reply("", [complete()])],
        models={"coder": {}},
    ) as api:
        bot("b", "openai-compatible:coder", 'api_key_env = "MY_LLM"')
        code, result, stderr = run(api, repo, "b", env={"MY_LLM": token})
        auth = [r.headers.get("authorization") for r in api.requests]
    assert code == 0, stderr
    assert auth and all(a == f"Bearer {token}" for a in auth)  # not the OpenAI key
    [session] = sessions("b")
    log = (session / "events.jsonl").read_text()
    assert token not in log and "[REDACTED]" in log
    output = next(e for e in events(session) if e["type"] == "command")
    assert output["output"].strip() == "token="  # the agent's shell never had it


def test_a_model_that_cannot_call_tools_ends_the_run_with_a_clear_error(repo: Path) -> None:
    with FakeOpenAI([], models={"gemma:2b": {"tools": False}}) as api:
        bot("small", "ollama:gemma:2b", f'base_url = "{api.base_url}"')
        code, result, stderr = run(api, repo, "small")
    assert code == 1 and "cannot call tools" in result["reason"], stderr


def test_plan_time_errors_name_the_fix(repo: Path) -> None:
    with FakeOpenAI([], models={"qwen3-coder": {}}) as api:
        bot("missing", "ollama:llama9", f'base_url = "{api.base_url}"')
        out = run_cli("run", "missing", cwd=repo)
        assert out.returncode == 2 and "ollama pull llama9" in out.stderr and "qwen3-coder" in out.stderr
        bot("nourl", "openai-compatible:qwen3-coder")
        out = run_cli("run", "nourl", cwd=repo, env={"OPENAI_BASE_URL": ""})
        assert out.returncode == 2 and "base_url" in out.stderr
        bot("nokey", "gpt-4.1")
        out = run_cli("run", "nokey", cwd=repo, env={"OPENAI_API_KEY": "", "OPENAI_BASE_URL": api.base_url})
        assert out.returncode == 2 and "OPENAI_API_KEY is not set" in out.stderr
        assert not [r for r in api.requests if "completions" in r.path or "responses" in r.path]


def test_the_window_comes_from_the_server_listing_else_the_config(repo: Path) -> None:
    big = 'for i in $(seq 150); do echo "line $i: lorem ipsum dolor sit amet consectetur"; done'
    script = [reply("", [shell(big, f"call_{n}")]) for n in range(4)] + [reply("", [complete()])]

    def summarizer(body: dict[str, Any]) -> Any:
        return (
            reply("Summary: printed lines.")
            if "outgrow the model's context window" in last_user_text(body)
            else None
        )

    with FakeOpenAI(script, models={"coder": {"max_model_len": 9000}}, respond=summarizer) as api:
        bot(
            "win",
            "openai-compatible:coder",
            f'base_url = "{api.base_url}"\ncontext_window = 500000\nmax_repeats = 50',
        )
        code, result, stderr = run(api, repo, "win")
    assert code == 0, stderr
    assert notices(sessions("win")[0], "context_compacted")  # 9,000 from the server, not the config's 500,000


def test_a_vllm_bot_asks_for_output_that_fits_the_window_and_survives_an_unknown_tool(repo: Path) -> None:
    script = [reply("", [call("bash", {"cmd": "ls"}, "call_1")]), reply("", [complete()])]
    with FakeOpenAI(script, models={"Qwen/Qwen3-Coder": {"max_model_len": 16_000}}) as api:
        bot("gpu", "vllm:Qwen/Qwen3-Coder", f'base_url = "{api.base_url}"')  # max_output_tokens: 32,000
        code, result, stderr = run(api, repo, "gpu")
        bodies = api.bodies
        api.assert_done()
    assert code == 0 and result["status"] == "completed", stderr
    assert [b["max_tokens"] for b in bodies] == [4000, 4000]  # a quarter of the window: vLLM accepts it
    [unknown] = [e for e in events(sessions("gpu")[0]) if e["type"] == "tool_result" and e["is_error"]]
    assert "unknown tool 'bash'" in unknown["content"]  # the model is told the tools, and goes on


def test_a_rust_openbot_model_name_runs_on_openai(repo: Path) -> None:
    with FakeOpenAI([reply("", [complete()])], models={"gpt-5.3-codex": {}}) as api:
        bot("legacy", "5.3-codex")  # as the Rust openbot's configs say it
        code, result, stderr = run(api, repo, "legacy")
        bodies = api.bodies
    assert code == 0 and result["status"] == "completed", stderr
    assert bodies[0]["model"] == "gpt-5.3-codex" and "input" in bodies[0]  # the Responses API
    assert result["cost_usd"] > 0  # priced from the table


def test_an_ollama_run_resumes_with_its_tool_calls_and_results_paired(repo: Path) -> None:
    first = [
        reply("", [shell("echo one > one.txt && git add one.txt && git commit -qm one", "call_1")]),
        reply("Done."),
    ]
    with FakeOpenAI(first, models={"qwen3-coder:latest": {}}) as api:
        bot("local", "ollama:qwen3-coder", f'base_url = "{api.base_url}"\nmax_iterations = 1')
        code, one, stderr = run(api, repo, "local")
        assert code == 3 and one["status"] == "limit", stderr
        api.add(reply("", [complete("resumed")]))
        code, two, stderr = run(api, repo, "local", "--resume", one["run_id"])
        resumed = api.bodies[-1]["messages"]
        api.assert_done()
    assert code == 0 and two["status"] == "completed", stderr
    roles = [m["role"] for m in resumed]
    assert roles[:5] == ["system", "user", "assistant", "tool", "assistant"]  # the server checked the pairs
    assert resumed[2]["tool_calls"][0]["id"] == "call_1" and resumed[3]["tool_call_id"] == "call_1"
    assert git(repo, "show", f"{two['branch']}:one.txt") == "one"
