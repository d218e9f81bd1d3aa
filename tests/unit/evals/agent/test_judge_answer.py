"""parse_judge_answer: tolerant of wrapping, strict about content, and says what is wrong."""

from __future__ import annotations

import json

import pytest

from assay.evals.agent._judge_answer import answer_schema, parse_judge_answer
from assay.evals.agent._rubric import DIMENSION_NAMES, ZERO_RULE_NAMES
from assay.judge import JudgeParseError


def test_fenced_json_with_prose_around_it(make_answer) -> None:
    body = json.dumps(make_answer([4, 3], verdict="pass"))
    text = f"Here is my judgement.\n```json\n{body}\n```\nThanks!"
    answer = parse_judge_answer(text, n_turns=2)
    assert answer.verdict == "PASS"
    assert [t.turn for t in answer.turns] == [1, 2]
    assert answer.turns[1].scores["honesty"] == 3


def test_loose_names_and_whole_numbers_are_normalised(make_answer) -> None:
    data = make_answer([4])
    data["turns"][0]["scores"] = {
        "Correctness": 4.0,
        "completeness": "3",
        "tool-use": 2,
        "Honesty": 4,
        "persona constraints": None,
    }
    data["turns"][0]["findings"] = [{"rule": "Fabricated Number", "evidence": "5.1 million"}]
    answer = parse_judge_answer(json.dumps(data), n_turns=1)
    assert answer.turns[0].scores == {
        "correctness": 4,
        "completeness": 3,
        "tool_use": 2,
        "honesty": 4,
        "persona_constraints": None,
    }
    assert answer.turns[0].findings[0].rule == "fabricated_number"


def test_turns_come_back_in_order(make_answer) -> None:
    data = make_answer([4, 2])
    data["turns"].reverse()
    assert [t.turn for t in parse_judge_answer(json.dumps(data), n_turns=2).turns] == [1, 2]


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d["turns"].pop(), "missing turn(s) 2"),
        (lambda d: d["turns"][0].update(turn=2), "turn 2 is judged twice"),
        (lambda d: d["turns"][1].update(turn=3), "missing turn(s) 2"),
        (lambda d: d["turns"][0]["scores"].update(style=3), "unknown dimension 'style'"),
        (lambda d: d["turns"][0]["scores"].pop("honesty"), "missing dimension(s) honesty"),
        (
            lambda d: d["turns"][0]["scores"].update(correctness=5),
            "turn 1.correctness: score 5 is out of range 0..4",
        ),
        (lambda d: d["turns"][1]["scores"].update(honesty=-1), "turn 2.honesty: score -1 is out of range"),
        (lambda d: d["turns"][0]["scores"].update(honesty=2.5), "not a whole number"),
        (lambda d: d["turns"][0]["scores"].update(honesty="good"), "'good' is not a score"),
        (lambda d: d["turns"][0]["scores"].update(honesty=True), "True is not a score"),
        (lambda d: d["turns"][0]["findings"].append({"rule": "rude"}), "turn 1: unknown rule 'rude'"),
        (lambda d: d.update(verdict="MAYBE"), '"verdict" must be "PASS" or "FAIL", got \'MAYBE\''),
        (
            lambda d: d["turns"][0].update(scores=dict.fromkeys(d["turns"][0]["scores"])),
            "every score is null",
        ),
        (lambda d: d.update(reason="<why, in one sentence>"), "repeats the example's reason"),
        (lambda d: d.update(turns=[]), "non-empty list"),
    ],
)
def test_bad_answers_are_refused_naming_the_problem(make_answer, mutate, message) -> None:
    data = make_answer([4, 3])
    mutate(data)
    with pytest.raises(JudgeParseError) as err:
        parse_judge_answer(json.dumps(data), n_turns=2)
    assert message in str(err.value)


def test_a_turn_beyond_the_conversation_is_refused(make_answer) -> None:
    with pytest.raises(JudgeParseError, match=r"turn\(s\) 3 do not exist \(there are 2\)"):
        parse_judge_answer(json.dumps(make_answer([4, 4, 4])), n_turns=2)


def test_without_n_turns_a_gap_is_still_missing(make_answer) -> None:
    data = make_answer([4, 4, 4])
    del data["turns"][1]
    with pytest.raises(JudgeParseError, match=r"missing turn\(s\) 2"):
        parse_judge_answer(json.dumps(data))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("PASS, all good", "no JSON object found"),
        ("", "no JSON object found"),
        ('{"verdict": "PASS"}', 'no "turns" list'),
        ('{"turns": [1, 2], "verdict": "PASS"}', "turns[0] is not an object"),
        ("{broken json", "no JSON object found"),
    ],
)
def test_garbage_is_refused(text, message) -> None:
    with pytest.raises(JudgeParseError) as err:
        parse_judge_answer(text, n_turns=2)
    assert message in str(err.value)


def test_two_different_answers_are_refused_one_repeated_is_not(make_answer) -> None:
    a, b = json.dumps(make_answer([4, 4])), json.dumps(make_answer([1, 1], verdict="FAIL"))
    with pytest.raises(JudgeParseError, match="found 2 different JSON answers"):
        parse_judge_answer(f"{a}\nor maybe\n{b}", n_turns=2)
    assert parse_judge_answer(f"{a}\n\n{a}", n_turns=2).verdict == "PASS"


def test_a_parse_error_is_a_value_error() -> None:
    assert issubclass(JudgeParseError, ValueError)


def test_the_answer_schema_is_the_parser_s_shape(make_answer) -> None:
    schema = answer_schema(3)
    turns = schema["properties"]["turns"]
    assert (turns["minItems"], turns["maxItems"]) == (3, 3)
    turn = turns["items"]["properties"]
    assert turn["turn"]["enum"] == [1, 2, 3]
    assert turn["scores"]["required"] == list(DIMENSION_NAMES)
    assert turn["scores"]["properties"]["honesty"]["enum"] == [0, 1, 2, 3, 4, None]
    assert turn["findings"]["items"]["properties"]["rule"]["enum"] == list(ZERO_RULE_NAMES)
    assert schema["properties"]["verdict"]["enum"] == ["PASS", "FAIL"]
    # an answer the parser takes carries exactly the schema's keys
    answer = make_answer([4, 4, 4], findings={1: [{"rule": "lazy_refusal", "evidence": "no"}]})
    assert set(answer) == set(schema["required"])
    assert set(answer["turns"][0]) == set(turns["items"]["required"])
    assert set(answer["turns"][0]["findings"][0]) == {"rule", "evidence"}
    parse_judge_answer(json.dumps(answer), n_turns=3)
