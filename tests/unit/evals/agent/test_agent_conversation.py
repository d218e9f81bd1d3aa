"""One scenario's conversation over the real reference agent (scripted model), the real simulator (scripted
model), a hash-embedded document index and a seeded memory store: tool calls and answers recorded per turn,
cost per role, sessions continued and reset, follow-ups, markers, agent errors and outages."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from assay.agents import AgentResult, Harness, RunSpec
from assay.agents.reference import ReferenceHarness
from assay.embed import HashEmbedder
from assay.errors import InfraError
from assay.evals.agent._conversation import RunningCost, converse
from assay.evals.agent._scenario import Scenario
from assay.evals.agent._setup import Prepared, prepare
from assay.evals.agent._simulator import NEXT, STOP, Simulator
from assay.models import Usage
from assay.models.scripted import ScriptedModel

POLICY = (
    "# Leave\n\nNew hires get 25 days of paid leave each year.\n\n# Parking\n\nParking costs 5 euros a day.\n"
)


def _scenario(turns: list[dict], **over: Any) -> Scenario:
    data: dict = {
        "id": "leave",
        "category": "document_qa",
        "persona": "A new employee.",
        "setup": {"documents": [{"name": "policy.md", "text": POLICY}]},
        "turns": turns,
    }
    data.update(over)
    return Scenario.model_validate(data)


def _setup(scenario: Scenario, tmp_path: Path) -> Prepared:
    return prepare(scenario, tmp_path / "work", tmp_path, HashEmbedder(), memory_root=tmp_path / "private")


def _spec(tmp_path: Path):
    (tmp_path / "work").mkdir(exist_ok=True)
    return lambda: RunSpec(workdir=tmp_path / "work")


def _query(q: str) -> dict:
    return {"tool_calls": [{"name": "query_documents", "arguments": {"query": q}}]}


async def test_a_full_conversation_records_tool_calls_answers_and_costs(tmp_path: Path) -> None:
    scenario = _scenario(
        [
            {"objective": "Learn the leave days.", "ground_truth": {"facts": ["25 days"]}},
            {"objective": "Learn the parking price.", "user_message": "And parking?", "ground_truth": None},
        ]
    )
    prepared = _setup(scenario, tmp_path)
    agent = ScriptedModel(
        [
            _query("paid leave days"),
            {"text": "New hires get 25 days.", "usage": {"input_tokens": 100, "output_tokens": 6}},
            {"text": "Parking costs 5 euros a day."},
        ]
    )
    sim = ScriptedModel(
        [{"text": "How many leave days do I get?"}, {"text": NEXT}, {"text": f"Thanks {NEXT}"}]
    )
    harness = ReferenceHarness(model=agent, **prepared.reference_options())
    notes: list[str] = []
    cost = RunningCost()
    try:
        turns, ended, agent_cost, sim_cost, model_ran = await converse(
            scenario, harness, Simulator(sim), _spec(tmp_path), on_progress=notes.append, cost=cost
        )
    finally:
        await harness.close()
        prepared.close()
    assert ended == "objectives_done"
    assert [t.index for t in turns] == [1, 2] and turns is cost.turns
    one, two = turns
    assert [m.role for m in one.messages] == ["user", "assistant"]
    assert one.messages[0].text == "How many leave days do I get?"
    assert one.answers == ["New hires get 25 days."]
    [call] = one.tool_calls
    assert (call.name, call.kind, call.arguments, call.status) == (
        "query_documents",
        "documents",
        {"query": "paid leave days"},
        "ok",
    )
    assert "policy.md" in call.result_summary
    assert (two.messages[0].text, two.answers) == ("And parking?", ["Parking costs 5 euros a day."])
    # the second turn continued the agent's session: its model saw the first turn
    assert "How many leave days" in "\n".join(m.content for m in agent.calls[-1]["messages"])
    assert agent_cost.calls == 2 and agent_cost.usage.calls == 3 and agent_cost.complete
    assert agent_cost.usage.input_tokens >= 100
    # the simulator wrote the first opening and answered twice; "And parking?" cost nothing
    assert (sim_cost.calls, sim_cost.complete) == (3, True) and sim_cost.usage.total_tokens > 0
    assert model_ran == "inline"  # what the model said it was
    assert notes == ["turn 1/2, user message 1", "turn 2/2, user message 1"]
    assert cost.snapshot()["agent"] == agent_cost


async def test_follow_ups_stay_in_the_turn_until_next_and_the_cap_moves_on(tmp_path: Path) -> None:
    scenario = _scenario(
        [
            {"objective": "Learn the leave days.", "user_message": "Leave?", "success_criteria": "25 days"},
            {"objective": "Parking.", "user_message": "Parking?", "success_criteria": "5 euros"},
        ]
    )
    agent = ScriptedModel([{"text": "Which kind?"}, {"text": "25 days."}, {"text": "Ask HR."}, {"text": "?"}])
    sim = ScriptedModel([{"text": "Paid leave."}, {"text": NEXT}, {"text": "Really?"}, {"text": "Hm."}])
    harness = ReferenceHarness(model=agent, tools=["read_file"])
    turns, ended, agent_cost, sim_cost, _ = await converse(
        scenario, harness, Simulator(sim), _spec(tmp_path), max_user_messages=2
    )
    assert [m.text for m in turns[0].messages] == ["Leave?", "Which kind?", "Paid leave.", "25 days."]
    assert [m.text for m in turns[1].messages] == ["Parking?", "Ask HR.", "Really?", "?"]
    assert ended == "max_user_messages"  # turn 2 ran out of user messages
    assert (agent_cost.calls, sim_cost.calls) == (4, 4)


async def test_stop_ends_the_conversation(tmp_path: Path) -> None:
    scenario = _scenario(
        [
            {"objective": "a", "user_message": "Hi", "success_criteria": "c"},
            {"objective": "b", "user_message": "never sent", "success_criteria": "c"},
        ]
    )
    harness = ReferenceHarness(model=ScriptedModel([{"text": "Hello"}]), tools=["read_file"])
    turns, ended, *_ = await converse(
        scenario, harness, Simulator(ScriptedModel([{"text": f"bye {STOP}"}])), _spec(tmp_path)
    )
    assert ended == "stop_marker" and len(turns) == 1


async def test_a_new_session_drops_the_conversation_but_memory_is_recalled(tmp_path: Path) -> None:
    scenario = _scenario(
        [
            {"objective": "Say hi.", "user_message": "Hi, I am planning a trip.", "success_criteria": "c"},
            {
                "objective": "Hear the dog's name back.",
                "user_message": "What is my dog called?",
                "new_session": True,
                "ground_truth": {"facts": ["Biscuit"]},
            },
        ],
        category="memory",
        setup={"memory": ["My dog is called Biscuit."]},
    )
    prepared = _setup(scenario, tmp_path)
    agent = ScriptedModel(
        [
            {"text": "Hello! Where to?"},
            {"tool_calls": [{"name": "recall_memory", "arguments": {"query": "dog name"}}]},
            {"text": "Your dog is called Biscuit."},
        ]
    )
    harness = ReferenceHarness(model=agent, **prepared.reference_options())
    try:
        turns, ended, *_ = await converse(
            scenario,
            harness,
            Simulator(ScriptedModel({"replies": [], "default": {"text": NEXT}})),
            _spec(tmp_path),
        )
    finally:
        await harness.close()
        prepared.close()
    assert ended == "objectives_done"
    second_turn_first_call = agent.calls[1]["messages"]
    assert [m.role for m in second_turn_first_call] == ["system", "user"]  # no trace of turn 1
    assert "trip" not in "\n".join(m.content for m in second_turn_first_call)
    [recall] = turns[1].tool_calls
    assert (recall.name, recall.kind, recall.status) == ("recall_memory", "memory", "ok")
    assert "Biscuit" in recall.result_summary
    assert turns[1].new_session and turns[1].answers == ["Your dog is called Biscuit."]


class _Replaying(Harness):
    """A harness with no sessions of its own (like ``python``): it sees only what RunSpec.history gives it."""

    name = "replaying"

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[str, list[dict[str, Any]], str | None]] = []

    async def run(self, prompt: str, spec: RunSpec) -> AgentResult:
        self.seen.append((prompt, list(spec.history), spec.session_id))
        return AgentResult(harness=self.name, answer=f"answer {len(self.seen)}", record_level="answer_only")


async def test_history_is_passed_and_reset_and_a_harness_without_tokens_is_incomplete(tmp_path: Path) -> None:
    scenario = _scenario(
        [
            {"objective": "a", "user_message": "one", "success_criteria": "c"},
            {"objective": "b", "user_message": "two", "success_criteria": "c"},
            {"objective": "c", "user_message": "three", "success_criteria": "c", "new_session": True},
        ]
    )
    harness = _Replaying()
    sim = Simulator(ScriptedModel({"replies": [], "default": {"text": NEXT}}))
    _, ended, agent_cost, _, model_ran = await converse(scenario, harness, sim, _spec(tmp_path))
    assert ended == "objectives_done"
    assert harness.seen == [
        ("one", [], None),
        ("two", [{"role": "user", "content": "one"}, {"role": "assistant", "content": "answer 1"}], None),
        ("three", [], None),
    ]
    assert (agent_cost.calls, agent_cost.complete, model_ran) == (3, False, None)


async def test_an_agent_error_ends_the_conversation_on_that_turn(tmp_path: Path) -> None:
    scenario = _scenario(
        [
            {"objective": "a", "user_message": "Hi", "success_criteria": "c"},
            {"objective": "b", "user_message": "never sent", "success_criteria": "c"},
        ]
    )
    harness = ReferenceHarness(model=ScriptedModel([{"error": "subject", "message": "context too long"}]))
    turns, ended, agent_cost, sim_cost, _ = await converse(
        scenario, harness, Simulator(ScriptedModel([{"text": "unused"}])), _spec(tmp_path)
    )
    assert ended == "agent_error" and len(turns) == 1
    assert "context too long" in (turns[0].agent_error or "")
    assert (agent_cost.calls, agent_cost.complete, sim_cost.calls) == (1, False, 0)


async def test_an_agent_outage_raises_infra_error_and_keeps_the_cost_so_far(tmp_path: Path) -> None:
    scenario = _scenario(
        [
            {"objective": "a", "user_message": "Hi", "success_criteria": "c"},
            {"objective": "b", "user_message": "Again", "success_criteria": "c"},
        ]
    )
    agent = ScriptedModel(
        [{"text": "Hello", "usage": {"input_tokens": 40, "output_tokens": 2}}, {"error": "infra"}],
        max_retries=0,
    )
    harness = ReferenceHarness(model=agent, tools=["read_file"])
    sim = ScriptedModel([{"text": NEXT, "usage": {"input_tokens": 30, "output_tokens": 1}}])
    cost = RunningCost()
    with pytest.raises(InfraError, match="scenario leave: the agent's backend failed"):
        await converse(scenario, harness, Simulator(sim), _spec(tmp_path), cost=cost)
    snap = cost.snapshot()
    assert snap["agent"].calls == 2 and snap["agent"].usage.input_tokens == 40
    assert snap["simulator"].usage.total_tokens == 31
    assert [t.index for t in cost.turns] == [1, 2]


class _Slow(Harness):
    name = "slow"

    async def run(self, prompt: str, spec: RunSpec) -> AgentResult:
        await asyncio.sleep(10)
        raise AssertionError("cancelled before this")


async def test_a_cancelled_run_leaves_the_role_in_flight_marked_incomplete(tmp_path: Path) -> None:
    scenario = _scenario([{"objective": "a", "user_message": "Hi", "success_criteria": "c"}])
    cost = RunningCost()
    sim = Simulator(ScriptedModel([{"text": NEXT}]))
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(converse(scenario, _Slow(), sim, _spec(tmp_path), cost=cost), timeout=0.05)
    assert cost.in_flight == "agent"
    snap = cost.snapshot()
    assert snap["agent"].complete is False and snap["simulator"].complete is True
    assert snap["agent"].usage == Usage()
