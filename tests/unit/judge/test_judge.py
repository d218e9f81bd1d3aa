"""The generic judge: a parse function in, a typed outcome out, under the one retry rule."""

from __future__ import annotations

import json

import pytest

from assay.errors import InfraError
from assay.judge import DEFAULT_RETRIES, Judge, JudgeOutcome, JudgeParseError, holds_to_schema, json_objects
from assay.models import Message, ModelInfraError
from assay.models.scripted import ScriptedModel

MESSAGES = [Message("system", "Grade it."), Message("user", "The answer: 42.")]
SCHEMA = {"type": "object", "properties": {"grade": {"type": "integer"}}, "required": ["grade"]}


def parse(text: str) -> int:
    found = [o for o in json_objects(text) if "grade" in o]
    if not found:
        raise JudgeParseError('no JSON object with a "grade"')
    return int(found[-1]["grade"])


async def test_a_parsed_answer_is_the_typed_outcome() -> None:
    model = ScriptedModel([{"text": 'Sure: ```json\n{"grade": 3}\n```'}])
    outcome: JudgeOutcome[int] = await Judge(model).ask(MESSAGES, parse)
    assert outcome.answer == 3 and outcome.error is None and outcome.calls == 1 and not outcome.refused
    assert outcome.raw == ['Sure: ```json\n{"grade": 3}\n```'] and outcome.usage.calls == 1
    assert model.calls[0]["options"] == {"temperature": 0}


async def test_a_parse_failure_is_sent_back_and_the_next_answer_counts() -> None:
    model = ScriptedModel([{"text": "it is fine"}, {"text": '{"grade": 2}'}])
    outcome = await Judge(model).ask(MESSAGES, parse, retry=lambda e: f"fix: {e}")
    assert outcome.answer == 2 and outcome.calls == 2 and outcome.error is None
    second = model.calls[1]["messages"]
    assert [m.content for m in second[:2]] == [m.content for m in MESSAGES]
    assert second[-2].role == "assistant" and second[-2].content == "it is fine"
    assert second[-1].role == "user" and second[-1].content == 'fix: no JSON object with a "grade"'


async def test_the_default_retry_message_names_the_error() -> None:
    model = ScriptedModel([{"text": "?"}, {"text": '{"grade": 1}'}])
    await Judge(model).ask(MESSAGES, parse)
    assert 'no JSON object with a "grade"' in model.calls[1]["messages"][-1].content


async def test_after_the_retries_there_is_no_answer_and_the_last_error() -> None:
    model = ScriptedModel([{"text": "a"}, {"text": "b"}, {"text": "c"}, {"text": "never asked"}])
    outcome = await Judge(model).ask(MESSAGES, parse)
    assert DEFAULT_RETRIES == 2
    assert outcome.answer is None and outcome.calls == 3 and outcome.raw == ["a", "b", "c"]
    assert outcome.error == 'no JSON object with a "grade"' and not outcome.refused
    assert len(model.calls) == 3


async def test_retries_zero_is_one_call_and_negative_is_refused() -> None:
    model = ScriptedModel([{"text": "a"}, {"text": "never asked"}])
    outcome = await Judge(model, retries=0).ask(MESSAGES, parse)
    assert outcome.answer is None and outcome.calls == 1 and len(model.calls) == 1
    with pytest.raises(ValueError, match="retries must be 0 or more"):
        Judge(model, retries=-1)


async def test_a_refused_request_is_not_retried() -> None:
    model = ScriptedModel([{"error": "subject", "message": "context too long"}, {"text": '{"grade": 1}'}])
    outcome = await Judge(model).ask(MESSAGES, parse)
    assert outcome.answer is None and outcome.calls == 0 and outcome.refused and len(model.calls) == 1
    assert outcome.error == "the judge model refused the request: scripted: context too long"


async def test_an_outage_propagates_first_call_or_retry() -> None:
    with pytest.raises(InfraError) as err:
        await Judge(ScriptedModel([{"error": "infra"}])).ask(MESSAGES, parse)
    assert isinstance(err.value, ModelInfraError)
    with pytest.raises(ModelInfraError):
        await Judge(ScriptedModel([{"text": "?"}, {"error": "quota"}])).ask(MESSAGES, parse)


async def test_any_other_parse_exception_is_a_bug_and_propagates() -> None:
    def broken(text: str) -> int:
        raise KeyError("grade")

    model = ScriptedModel([{"text": "{}"}, {"text": "never asked"}])
    with pytest.raises(KeyError):
        await Judge(model).ask(MESSAGES, broken)
    assert len(model.calls) == 1


async def test_the_schema_is_sent_only_when_the_judge_is_constrained() -> None:
    model = ScriptedModel([{"text": '{"grade": 4}'}] * 2)
    opts = {"temperature": 0, "max_tokens": 50}
    await Judge(model, options=opts, constrained=True).ask(MESSAGES, parse, schema=SCHEMA)
    await Judge(model, options=opts).ask(MESSAGES, parse, schema=SCHEMA)
    assert model.calls[0]["options"] == {**opts, "response_format": {"type": "json_object", "schema": SCHEMA}}
    assert model.calls[1]["options"] == opts
    assert Judge(model, constrained=True).call_options(None) == {"temperature": 0}


def test_json_objects_finds_every_top_level_object_in_order() -> None:
    text = 'first {"a": 1} then ```json\n{"b": {"c": 2}}\n``` and {broken and [1, 2] {"d": [3]}'
    assert json_objects(text) == [{"a": 1}, {"b": {"c": 2}}, {"d": [3]}]
    assert json_objects("no object here") == []
    assert json_objects(json.dumps({"x": "}{"})) == [{"x": "}{"}]


def test_schema_decoding_by_provider_or_by_choice() -> None:
    assert holds_to_schema("local/smollm2") and holds_to_schema("openai-compat/qwen@http://127.0.0.1:8080/v1")
    assert not holds_to_schema("anthropic/claude-sonnet-4-5") and not holds_to_schema("openai/gpt-4.1")
    assert holds_to_schema("openai/gpt-4.1", "on") and not holds_to_schema("local/smollm2", "off")
    with pytest.raises(ValueError, match="auto, on or off"):
        holds_to_schema("local/smollm2", "maybe")
