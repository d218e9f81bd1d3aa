"""The agent judge over a scripted model: retries an unusable answer with its parse error, then gives up;
outages raise."""

from __future__ import annotations

import json

import pytest

from assay.errors import InfraError
from assay.evals.agent._judge_answer import answer_schema
from assay.evals.agent._judge_view import JudgeView, judge_view
from assay.evals.agent._verdict import derive
from assay.judge import Judge
from assay.models import ModelInfraError
from assay.models.scripted import ScriptedModel


@pytest.fixture
def view(scenario, turns, passing_checks) -> JudgeView:
    return JudgeView.of(scenario, turns, passing_checks)


def _user_texts(model: ScriptedModel, call: int) -> list[str]:
    return [m.content for m in model.calls[call]["messages"] if m.role == "user"]


async def test_garbage_then_valid_json_succeeds_on_the_retry(view, make_answer, passing_checks) -> None:
    good = json.dumps(make_answer([4, 3]))
    model = ScriptedModel(
        {"replies": [{"text": "I think it went well. PASS"}, {"text": f"```json\n{good}\n```"}]}
    )
    outcome = await judge_view(Judge(model), view)
    assert outcome.calls == 2 and outcome.error is None
    assert outcome.answer is not None and outcome.answer.turns[1].scores["correctness"] == 3
    assert outcome.raw == ["I think it went well. PASS", f"```json\n{good}\n```"]
    assert outcome.usage.calls == 2 and outcome.usage.input_tokens > 0
    # the retry shows the judge its own answer and what was wrong with it
    second = model.calls[1]["messages"]
    assert second[-2].role == "assistant" and second[-2].content == "I think it went well. PASS"
    assert "no JSON object found" in second[-1].content and "turns 1 to 2" in second[-1].content
    assert model.calls[0]["options"] == {"temperature": 0}
    assert derive(outcome.answer, passing_checks, view.n_turns).passed


async def test_a_content_error_is_sent_back_too(view, make_answer) -> None:
    bad = make_answer([4, 3])
    bad["turns"][0]["scores"]["correctness"] = 7
    model = ScriptedModel([{"text": json.dumps(bad)}, {"text": json.dumps(make_answer([4, 3]))}])
    outcome = await judge_view(Judge(model), view)
    assert outcome.calls == 2 and outcome.answer is not None
    assert "turn 1.correctness: score 7 is out of range 0..4" in _user_texts(model, 1)[-1]


async def test_garbage_every_time_gives_no_answer_and_the_error(view) -> None:
    model = ScriptedModel([{"text": "hmm"}, {"text": "PASS"}, {"text": '{"verdict": "PASS"}'}])
    outcome = await judge_view(Judge(model, retries=2), view)
    assert outcome.answer is None and outcome.calls == 3 and len(outcome.raw) == 3
    assert outcome.error == 'the JSON object has no "turns" list'
    assert len(model.calls) == 3  # no fourth call


async def test_retries_zero_makes_one_call(view) -> None:
    model = ScriptedModel([{"text": "hmm"}, {"text": "never asked"}])
    outcome = await judge_view(Judge(model, retries=0), view)
    assert outcome.answer is None and outcome.calls == 1 and len(model.calls) == 1
    with pytest.raises(ValueError, match="retries must be 0 or more"):
        Judge(model, retries=-1)


async def test_an_outage_raises_an_infra_error(view) -> None:
    model = ScriptedModel({"replies": [{"error": "infra"}]})
    with pytest.raises(InfraError) as err:
        await judge_view(Judge(model), view)
    assert isinstance(err.value, ModelInfraError)


async def test_an_outage_on_the_retry_raises_too(view) -> None:
    model = ScriptedModel([{"text": "garbage"}, {"error": "quota"}])
    with pytest.raises(ModelInfraError):
        await judge_view(Judge(model), view)


async def test_a_refused_request_is_not_retried(view) -> None:
    model = ScriptedModel([{"error": "subject", "message": "context too long"}, {"text": "never asked"}])
    outcome = await judge_view(Judge(model), view)
    assert outcome.answer is None and outcome.calls == 0 and len(model.calls) == 1
    assert outcome.error == "the judge model refused the request: scripted: context too long"


async def test_options_are_passed_to_every_call(view, make_answer) -> None:
    model = ScriptedModel([{"text": "x"}, {"text": json.dumps(make_answer([4, 4]))}])
    opts = {"temperature": 0, "response_format": {"type": "json_object"}}
    await judge_view(Judge(model, options=opts), view)
    assert [c["options"] for c in model.calls] == [opts, opts]


async def test_constrained_sends_the_answer_schema_for_the_view(view, make_answer) -> None:
    model = ScriptedModel([{"text": json.dumps(make_answer([4, 4]))}])
    judge = Judge(model, constrained=True)
    outcome = await judge_view(judge, view)
    assert outcome.answer is not None
    sent = model.calls[0]["options"]
    assert sent["temperature"] == 0
    assert sent["response_format"] == {"type": "json_object", "schema": answer_schema(2)}
    assert "response_format" not in Judge(model).call_options(answer_schema(2))


def test_schema_decoding_by_provider_or_by_choice() -> None:
    from assay.judge import holds_to_schema

    assert holds_to_schema("local/smollm2") and holds_to_schema("openai-compat/qwen@http://127.0.0.1:8080/v1")
    assert not holds_to_schema("anthropic/claude-sonnet-4-5") and not holds_to_schema("openai/gpt-4.1")
    assert holds_to_schema("openai/gpt-4.1", "on") and not holds_to_schema("local/smollm2", "off")
    with pytest.raises(ValueError, match="auto, on or off"):
        holds_to_schema("local/smollm2", "maybe")
