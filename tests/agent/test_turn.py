"""The turn engine with the scripted backend: steps, tool errors, step limit, nudge, repeat guard, budgets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from openbot.agent.budget import Budget
from openbot.agent.context import ContextKeeper
from openbot.agent.models.scripted import ScriptedModel
from openbot.agent.tools.base import ToolContext
from openbot.agent.tools.registry import default_tools
from openbot.agent.turn import Turn, TurnLimits
from openbot.events import ListSink
from openbot.state.conversation import Conversation
from openbot.stops import Completed, Completion, EndTurn, LimitReached, StepLimit, Stuck


def make_turn(
    tmp_path: Path,
    responses: list[dict],
    limits: TurnLimits | None = None,
    budget: Budget | None = None,
    conv_path: Path | None = None,
) -> tuple[Turn, ScriptedModel, ListSink]:
    model = ScriptedModel(responses)
    sink = ListSink()
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    ctx = ToolContext(
        workdir=work, session_dir=tmp_path / "session", env={"PATH": "/usr/bin:/bin"}, sink=sink
    )
    conv = Conversation(conv_path)
    conv.add_user_text("Do the task.")
    turn = Turn(
        model=model,
        system="You are a bot.",
        tools=default_tools(),
        conversation=conv,
        ctx=ctx,
        limits=limits or TurnLimits(),
        budget=budget or Budget(),
        context=ContextKeeper(),
    )
    return turn, model, sink


def sh(cmd: str) -> dict:
    return {"name": "shell", "input": {"command": cmd}}


def test_multi_step_turn_feeds_tool_results_back(tmp_path: Path) -> None:
    turn, model, sink = make_turn(
        tmp_path,
        [
            {"text": "step 1", "tool_calls": [sh("echo one")]},
            {"text": "step 2", "tool_calls": [sh("echo two; exit 3")]},
            {"text": "finished"},
        ],
    )
    result = turn.run()
    assert isinstance(result.ended, EndTurn) and result.ended.status == "completed"
    assert result.steps == 3 and result.last_text == "finished"
    third = model.requests[2].messages
    results = [b for m in third if m["role"] == "user" for b in m["content"] if b["type"] == "tool_result"]
    assert "one" in results[0]["content"] and "exit code: 3" in results[1]["content"].lower()
    types = [type(e).__name__ for e in sink.events]
    assert types.count("TokenCount") == 3 and types[-1] == "TurnCompleted"


def test_unknown_tool_and_bad_input_are_error_results_not_crashes(tmp_path: Path) -> None:
    turn, model, _ = make_turn(
        tmp_path,
        [
            {"tool_calls": [{"name": "no_such_tool", "input": {}}, {"name": "shell", "input": {"cmd": "x"}}]},
            {"text": "ok"},
        ],
    )
    assert isinstance(turn.run().ended, EndTurn)
    blocks = model.requests[1].messages[-1]["content"]
    assert [b.get("is_error") for b in blocks] == [True, True]


def test_session_complete_ends_the_turn_and_the_run(tmp_path: Path) -> None:
    turn, _, sink = make_turn(
        tmp_path,
        [
            {"tool_calls": [{"name": "session_complete", "input": {"summary": "s", "action": "review"}}]},
        ],
    )
    with pytest.raises(Completed) as done:
        turn.run()
    assert done.value.completion == Completion(summary="s", action="review")
    assert type(sink.events[-1]).__name__ == "TurnCompleted"


def test_step_limit_nudges_at_80_percent_then_ends(tmp_path: Path) -> None:
    responses = [{"tool_calls": [sh(f"echo {i}")]} for i in range(10)]
    turn, model, sink = make_turn(tmp_path, responses, TurnLimits(max_steps=5))
    result = turn.run()
    assert isinstance(result.ended, StepLimit) and result.ended.status == "limit" and result.steps == 5
    nudged = [i for i, r in enumerate(model.requests) if "Wrap up now" in str(r.messages[-1])]
    assert nudged == [4]
    assert type(sink.events[-1]).__name__ == "TurnAborted"


def test_identical_repeated_calls_end_the_turn_as_stuck(tmp_path: Path) -> None:
    turn, model, _ = make_turn(tmp_path, [{"tool_calls": [sh("true")]}] * 10, TurnLimits(max_repeats=3))
    result = turn.run()
    assert isinstance(result.ended, Stuck) and len(model.requests) == 3


def test_budget_is_checked_before_every_call(tmp_path: Path) -> None:
    resp = {"tool_calls": [sh("true")], "usage": {"input": 600, "output": 10}}
    turn, model, _ = make_turn(
        tmp_path, [resp, {**resp, "tool_calls": [sh("echo x")]}, resp], budget=Budget(max_tokens=1000)
    )
    with pytest.raises(LimitReached) as e:
        turn.run()
    assert e.value.kind == "max_tokens" and len(model.requests) == 2
    assert turn.result.usage.budget_tokens == 1220


def test_scripted_model_fails_by_name_when_over_called(tmp_path: Path) -> None:
    from openbot.errors import ModelError

    turn, _, _ = make_turn(tmp_path, [{"tool_calls": [sh("true")]}])
    with pytest.raises(ModelError, match="called 2 times but the script has only 1"):
        turn.run()


def test_conversation_is_persisted_and_reloads_identically(tmp_path: Path) -> None:
    path = tmp_path / "conv.jsonl"
    turn, _, _ = make_turn(tmp_path, [{"tool_calls": [sh("echo hi")]}, {"text": "bye"}], conv_path=path)
    turn.run()
    assert Conversation.load(path).messages == turn.conversation.messages


def test_context_compaction_keeps_requests_small(tmp_path: Path) -> None:
    big = "for i in $(seq 150); do echo yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy$i; done"
    responses = [{"tool_calls": [sh(big + f" # {i}")]} for i in range(60)] + [{"text": "done"}]
    turn, model, sink = make_turn(tmp_path, responses, TurnLimits(max_steps=100, max_repeats=100))
    turn.context = ContextKeeper(window=50_000)
    assert isinstance(turn.run().ended, EndTurn)
    sizes = [len(str(r.messages)) // 4 for r in model.requests]
    assert max(sizes) < 50_000 * 0.85
    assert any(type(e).__name__ == "Notice" for e in sink.events)


def test_200_tool_calls_with_20kb_outputs_stay_inside_the_window(tmp_path: Path) -> None:
    # 20 kB of distinct lines per call: ~1 MB of tool output in all, far more than the default window holds
    cmd = (
        'for i in $(seq 190); do echo "line $i of call {n}: lorem ipsum dolor sit amet consectetur '
        'adipiscing elit sed do eiusmod tempor"; done'
    )
    responses = [{"tool_calls": [sh(cmd.format(n=n))]} for n in range(200)] + [{"text": "done"}]
    turn, model, sink = make_turn(tmp_path, responses, TurnLimits(max_steps=300, max_repeats=300))
    assert isinstance(turn.run().ended, EndTurn)
    assert len(model.requests) == 201
    window = turn.context.window
    sizes = [(len(r.system) + len(json.dumps(r.messages))) // 4 for r in model.requests]
    assert max(sizes) <= window * 0.8  # what was sent never passed the compaction trigger
    assert (
        sum(len(json.dumps(b)) for b in model.requests[-1].messages[-1]["content"]) > 5_000
    )  # recent: not stubbed
    assert any(type(e).__name__ == "Notice" for e in sink.events)


def test_billed_usage_of_a_call_that_failed_still_counts(tmp_path: Path) -> None:
    from openbot.agent.models.base import Usage
    from openbot.errors import ModelError

    class FailingModel:
        model = "failing"

        def complete(self, request, sink):  # type: ignore[no-untyped-def]
            raise ModelError(
                "the API stayed overloaded after 4 attempts", usage=Usage(300, 40, cost_usd=0.01)
            )

    turn, _, _ = make_turn(tmp_path, [])
    turn.model = FailingModel()  # type: ignore[assignment]
    with pytest.raises(ModelError):
        turn.run()
    assert turn.budget.spent.total_tokens == 340 and turn.budget.spent.cost_usd == pytest.approx(0.01)
    assert turn.result.usage.total_tokens == 340
