"""LongMemEval graded as its authors grade it: each question type's own rule reaches the judge, both ways.

The judge here is a deterministic double (the scripted provider) that says yes only when the prompt holds
both the pair under test and the rule that makes it right: the same pair under a type without that rule
gets no. What is tested is the rule each type sends and how the verdict is read, not a model's skill (the
embedded-model test at the end is plumbing only).
"""

from __future__ import annotations

import pytest

from assay.evals.memory._grading import judge_longmemeval, longmemeval_prompt
from assay.judge import Judge
from assay.models.scripted import ScriptedModel

#: the words of each rule the double looks for
OFF_BY_ONE = "off by one still counts"
LATEST = "gives that latest value, even if it also mentions what it used to be"
OTHER_WORDS = "says the same thing in other words"
RUBRIC = "uses what it knows about the user the way the description asks"
CANNOT = "recognises that it cannot answer"


def _double(*pairs: tuple[str, str, str]) -> Judge:
    """A judge saying yes to (gold, reply) only under the prompt rule named with it, no otherwise."""
    replies = [
        {"regex": f"(?s)(?:Correct answer|Why it cannot be answered): {gold}\\n\\nReply: {reply}\\n\\n.*{rule}",
         "text": "yes"}
        for gold, reply, rule in pairs
    ]  # fmt: skip
    return Judge(ScriptedModel({"replies": replies, "default": {"text": "no"}}))


async def _grade(judge: Judge, qtype: str, gold: str, reply: str, *, abstention: bool = False) -> bool | None:
    judged = await judge_longmemeval(judge, qtype, "the question?", gold, reply, abstention=abstention)
    assert judged.error is None
    return judged.correct


@pytest.mark.parametrize("qtype", ["single-session-user", "single-session-assistant", "multi-session"])
async def test_the_right_answer_in_other_words_passes_and_a_wrong_one_fails(qtype: str) -> None:
    judge = _double(("Lisbon", "You flew to the capital of Portugal.", OTHER_WORDS))
    assert await _grade(judge, qtype, "Lisbon", "You flew to the capital of Portugal.") is True
    assert await _grade(judge, qtype, "Lisbon", "You flew to Porto.") is False


async def test_temporal_reasoning_forgives_an_off_by_one_count_and_nothing_more() -> None:
    judge = _double(("18 days", "19 days", OFF_BY_ONE))
    assert await _grade(judge, "temporal-reasoning", "18 days", "19 days") is True
    assert await _grade(judge, "temporal-reasoning", "18 days", "25 days") is False
    # the tolerance is temporal reasoning's own: another type gets no such rule
    assert await _grade(judge, "multi-session", "18 days", "19 days") is False
    assert OFF_BY_ONE not in longmemeval_prompt("multi-session", "q", "18 days", "19 days", abstention=False)


async def test_knowledge_update_accepts_the_updated_answer_beside_the_old_one() -> None:
    reply = "You used to run in Asics, but you switched to Hoka."
    judge = _double(("Hoka", reply, LATEST))
    assert await _grade(judge, "knowledge-update", "Hoka", reply) is True
    assert await _grade(judge, "knowledge-update", "Hoka", "Asics.") is False


async def test_a_preference_question_is_graded_against_its_rubric() -> None:
    rubric = "The user would prefer suggestions that use their new espresso machine."
    reply = "Since you got an espresso machine, try a cortado."
    judge = _double((rubric, reply, RUBRIC))
    assert await _grade(judge, "single-session-preference", rubric, reply) is True
    assert await _grade(judge, "single-session-preference", rubric, "Try instant coffee.") is False


async def test_an_abstention_question_passes_only_when_the_reply_declines() -> None:
    why = "You mentioned a tortoise but never a parrot."
    judge = _double((why, "You never told me about a parrot.", CANNOT))
    assert (
        await _grade(judge, "multi-session", why, "You never told me about a parrot.", abstention=True)
        is True
    )
    assert await _grade(judge, "multi-session", why, "Your parrot is Polly.", abstention=True) is False
    prompt = longmemeval_prompt("temporal-reasoning", "q", why, "r", abstention=True)
    assert CANNOT in prompt and OFF_BY_ONE not in prompt  # abstention has its own prompt whatever the type


async def test_a_reply_that_is_neither_yes_nor_no_is_asked_again_then_left_unjudged() -> None:
    judge = Judge(ScriptedModel({"replies": [{"text": "maybe"}] * 3}))
    judged = await judge_longmemeval(judge, "multi-session", "q?", "a", "r", abstention=False)
    assert judged.correct is None and judged.error is not None and judged.usage.calls == 3
