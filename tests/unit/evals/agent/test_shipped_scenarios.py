"""The shipped agent scenarios: they load cleanly, their scripted judges parse, and for the categories written
with a scripted right-or-wrong agent the verdict the code derives is the one the scenario is meant to get.

The replay here builds the conversation from the script alone (the answers and tool calls the scripted agent
makes), which is all the code checks and the verdict read; the pr suite runs the same scripts for real.
"""

from __future__ import annotations

import json
import warnings

import pytest

from assay.agents import ToolCallRecord
from assay.agents.reference.harness import ALL_TOOLS
from assay.evals.agent._judge_answer import parse_judge_answer
from assay.evals.agent._record import ConversationTurn, Message
from assay.evals.agent._scenario import Scenario
from assay.evals.agent._simulator import parse_reply
from assay.evals.agent._verdict import derive
from assay.evals.agent.checks import run_checks
from assay.evals.agent.scenario_load import ScenarioWarning, default_scenarios_dir, load_scenarios

#: categories whose scripts are meant to pass unless tagged ``scripted-wrong``
REPLAYED = ("document_qa", "not_in_documents", "tool_choice", "context", "memory")


def _scenarios() -> list[Scenario]:
    with warnings.catch_warnings():
        warnings.simplefilter("error", ScenarioWarning)
        return load_scenarios(default_scenarios_dir())


SCENARIOS = _scenarios()
MINE = [s for s in SCENARIOS if s.category in REPLAYED]


def replay(s: Scenario) -> list[ConversationTurn]:
    """The conversation the scripted agent and simulator give (answers and tool calls)."""
    assert s.script is not None
    turns: list[ConversationTurn] = []
    for i, (turn, replies) in enumerate(zip(s.turns, s.script.agent, strict=True), start=1):
        follow_ups = [] if s.script.simulator is None else list(s.script.simulator[i - 1])
        assert turn.user_message is not None, f"{s.id}: replayed turns open with a literal user_message"
        conv = ConversationTurn(index=i, objective=turn.objective, new_session=turn.new_session)
        conv.messages.append(Message(role="user", text=turn.user_message))
        calls: list[ToolCallRecord] = []
        for reply in replies:
            for call in reply.get("tool_calls", []):
                kind = ALL_TOOLS[call["name"]].kind
                calls.append(
                    ToolCallRecord(name=call["name"], kind=kind, arguments=call.get("arguments", {}))
                )
            if not reply.get("tool_calls"):
                conv.messages.append(Message(role="assistant", text=reply.get("text", ""), tool_calls=calls))
                calls = []
                if follow_ups:
                    text, marker = parse_reply(follow_ups.pop(0))
                    if marker is None:
                        conv.messages.append(Message(role="user", text=text))
        turns.append(conv)
    return turns


def test_the_suite_is_large_and_varied_enough() -> None:
    assert len(MINE) >= 21
    per = {c: sum(s.category == c for s in MINE) for c in REPLAYED}
    assert per["document_qa"] >= 5 and all(n >= 4 for n in per.values()), per
    assert all(s.source is not None and s.difficulty_rationale for s in SCENARIOS if not s.draft)
    memory = [s for s in MINE if s.category == "memory"]
    assert all(s.setup.memory and any(t.new_session for t in s.turns) for s in memory)
    assert sum(t.expects_abstention for s in MINE if s.category == "not_in_documents" for t in s.turns) >= 4


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_every_scripted_judge_answer_parses(scenario: Scenario) -> None:
    assert scenario.script is not None and scenario.script.judge, "the pr suite needs a scripted judge"
    last = scenario.script.judge[-1]
    text = last if isinstance(last, str) else json.dumps(last)
    answer = parse_judge_answer(text, len(scenario.turns))
    assert [t.turn for t in answer.turns] == list(range(1, len(scenario.turns) + 1))


@pytest.mark.parametrize("scenario", MINE, ids=lambda s: s.id)
def test_the_derived_verdict_is_the_one_the_script_means(scenario: Scenario) -> None:
    turns = replay(scenario)
    checks = run_checks(scenario, turns)
    assert scenario.script is not None
    answer = parse_judge_answer(json.dumps(scenario.script.judge[0]), len(scenario.turns))
    judgement = derive(answer, checks, len(scenario.turns))
    wrong = "scripted-wrong" in scenario.tags
    failed = [f"{c.name}@{c.turn}: {c.detail}" for c in checks if not c.passed]
    assert judgement.passed is not wrong, (judgement.reason, failed)
    if wrong:  # a wrong answer is caught in code too, not only by the judge
        assert failed
    else:
        assert not failed
    overruled = "judge-overruled" in scenario.tags
    assert judgement.overruled is overruled
    # the scripted judge agrees with the code checks, except where it is meant to be overruled
    assert bool(judgement.disagreements) is overruled, judgement.disagreements


def test_about_a_quarter_of_the_scripted_agents_answer_wrong() -> None:
    wrong = [s.id for s in MINE if "scripted-wrong" in s.tags]
    assert 0.2 <= len(wrong) / len(MINE) <= 0.35, wrong
    assert sum("judge-overruled" in s.tags for s in MINE) >= 1
