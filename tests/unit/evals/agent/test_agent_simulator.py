"""The simulated user: what its prompt holds (and never holds), roles swapped, markers parsed, literal openings."""

from __future__ import annotations

import pytest

from assay.errors import SubjectError
from assay.evals.agent._record import Message as ConvMessage
from assay.evals.agent._scenario import Scenario
from assay.evals.agent._simulator import NEXT, STOP, Simulator, parse_reply, simulator_messages
from assay.models.scripted import ScriptedModel

GROUND = "FORTY-TWO-WIDGETS"
CRITERIA = "CRITERIA-ZEBRA-MUST-CITE"
ANSWER = "EXPECTED-ANSWER-QUOKKA"


def _scenario(**over: object) -> Scenario:
    data: dict = {
        "id": "widgets",
        "category": "document_qa",
        "persona": "A warehouse manager in a hurry who writes short messages.",
        "user_knowledge": {"site": "the Leeds warehouse", "order number": "A-1182"},
        "expected_tools": ["query_documents", "kind:documents"],
        "forbidden_tools": ["run_shell_forbidden_tool"],
        "setup": {"canaries": ["CANARY-PELICAN"], "secrets": ["SECRET-OTTER"]},
        "turns": [
            {
                "objective": "Find out how many widgets the Leeds warehouse holds.",
                "ground_truth": {"document": "stock.md", "facts": [GROUND], "expected_answer": ANSWER},
            },
            {
                "objective": "Learn who signs off a transfer.",
                "success_criteria": CRITERIA,
                "new_session": True,
            },
        ],
    }
    data.update(over)
    return Scenario.model_validate(data)


def _text(model: ScriptedModel) -> str:
    return "\n".join(m.content for call in model.calls for m in call["messages"])


@pytest.mark.parametrize(
    ("raw", "text", "marker"),
    [
        (NEXT, "", "next"),
        (STOP, "", "stop"),
        ("Thanks, that is all I needed. <<NEXT>>", "", "next"),
        ("ok << next >>", "", "next"),
        ("<STOP>", "", "stop"),
        ("**NEXT**", "", "next"),
        ("  NEXT. ", "", "next"),
        ("Great <<STOP>> and <<NEXT>>", "", "stop"),
        ("User: How many are left?", "How many are left?", None),
        ('"How many are left?"', "How many are left?", None),
        ("What comes next in the list?", "What comes next in the list?", None),
        ("   ", "", None),
    ],
)
def test_markers_are_parsed_wherever_they_are(raw: str, text: str, marker: str | None) -> None:
    assert parse_reply(raw) == (text, marker)


async def test_the_prompt_has_persona_objective_knowledge_and_markers_but_no_grading_material() -> None:
    scenario = _scenario()
    model = ScriptedModel([{"text": "How many widgets are in Leeds?"}, {"text": "Who signs transfers?"}])
    sim = Simulator(model)
    first = await sim.opening(scenario, scenario.turns[0], [])
    history = [
        ConvMessage(role="user", text=first.text),
        ConvMessage(role="assistant", text="There are 42."),
    ]
    second = await sim.opening(scenario, scenario.turns[1], history)
    assert (first.text, second.text) == ("How many widgets are in Leeds?", "Who signs transfers?")
    seen = _text(model)
    for wanted in (
        "warehouse manager in a hurry",
        "how many widgets the Leeds warehouse holds",
        "who signs off a transfer",
        "the Leeds warehouse",
        "A-1182",
        NEXT,
        STOP,
        "never invent",
        "new chat",
    ):
        assert wanted.lower() in seen.lower(), wanted
    for hidden in (
        GROUND,
        CRITERIA,
        ANSWER,
        "stock.md",
        "query_documents",
        "kind:documents",
        "run_shell_forbidden_tool",
        "CANARY-PELICAN",
        "SECRET-OTTER",
        "judge",
    ):
        assert hidden.lower() not in seen.lower(), hidden


def test_roles_are_swapped_for_the_simulator() -> None:
    scenario = _scenario()
    history = [
        ConvMessage(role="user", text="How many widgets?"),
        ConvMessage(role="assistant", text="There are 42 widgets."),
    ]
    msgs = simulator_messages(scenario, scenario.turns[0], history, opening=False)
    assert [m.role for m in msgs] == ["system", "user", "assistant", "user"]
    assert msgs[2].content == "How many widgets?"
    assert msgs[3].content.startswith("There are 42 widgets.")
    assert NEXT in msgs[3].content  # the reminder of the markers rides on the agent's last answer


async def test_a_literal_user_message_makes_no_model_call() -> None:
    scenario = _scenario(turns=[{"objective": "Ask.", "user_message": "Hello there", "ground_truth": None}])
    model = ScriptedModel([{"text": "should not be used"}])
    reply = await Simulator(model).opening(scenario, scenario.turns[0], [])
    assert (reply.text, reply.marker, reply.called, reply.calls) == ("Hello there", None, False, 0)
    assert reply.usage.total_tokens == 0
    assert model.calls == []


async def test_reply_reports_marker_and_usage() -> None:
    scenario = _scenario()
    model = ScriptedModel([{"text": "Fine. <<NEXT>>", "usage": {"input_tokens": 50, "output_tokens": 3}}])
    history = [ConvMessage(role="user", text="q"), ConvMessage(role="assistant", text="a")]
    reply = await Simulator(model).reply(scenario, scenario.turns[0], history)
    assert (reply.text, reply.marker, reply.called, reply.calls) == ("", "next", True, 1)
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (50, 3)
    assert reply.raw == "Fine. <<NEXT>>"


async def test_an_empty_answer_is_asked_again_then_counts_as_next() -> None:
    scenario = _scenario()
    history = [ConvMessage(role="user", text="q"), ConvMessage(role="assistant", text="a")]
    model = ScriptedModel([{"text": ""}, {"text": "Is that per site?"}])
    again = await Simulator(model).reply(scenario, scenario.turns[0], history)
    assert (again.text, again.marker, again.calls) == ("Is that per site?", None, 2)
    assert "not a message to the assistant" in model.calls[1]["messages"][-1].content
    empty = await Simulator(ScriptedModel([{"text": ""}, {"text": " "}])).reply(
        scenario, scenario.turns[0], history
    )
    assert (empty.text, empty.marker, empty.calls) == ("", "next", 2)


async def test_an_opening_with_no_message_twice_is_an_error_and_stop_is_kept() -> None:
    scenario = _scenario()
    with pytest.raises(SubjectError, match="no opening message for objective 1"):
        await Simulator(ScriptedModel([{"text": NEXT}, {"text": ""}])).opening(
            scenario, scenario.turns[0], []
        )
    stop = await Simulator(ScriptedModel([{"text": STOP}])).opening(scenario, scenario.turns[0], [])
    assert (stop.marker, stop.calls) == ("stop", 1)
