"""Grading a model's answer: numeric within 1%, exact after normalisation, judge only when asked."""

from __future__ import annotations

import re

from assay.evals.retrieval._rag_data import Question
from assay.evals.retrieval._rag_score import grade_exact, grade_numeric
from assay.models import ChatModel, Message, Usage

__all__ = ["JUDGE_PROMPT", "grade_answer"]

JUDGE_PROMPT = (
    "You grade answers to questions about documents. Compare the candidate answer with the reference "
    "answer. The candidate is correct if it states the same facts as the reference (wording may differ) "
    "and adds nothing that contradicts it. Reply with one word on the first line: CORRECT or INCORRECT."
)


async def grade_answer(
    question: Question, text: str, judge: ChatModel | None
) -> tuple[str, bool | None, Usage | None]:
    """``(verdict, correct or None when unscored, judge usage)`` for one answer."""
    if question.type == "numeric":
        assert question.value is not None
        ok = grade_numeric(text, float(question.value), question.unit) or grade_exact(
            text, [question.answer, *question.aliases]
        )
        return ("correct" if ok else "wrong"), ok, None
    if question.type == "exact":
        ok = grade_exact(text, [question.answer, *question.aliases])
        return ("correct" if ok else "wrong"), ok, None
    if judge is None:
        return "unscored", None, None
    prompt = (
        f"Question: {question.question}\nReference answer: {question.answer}\nCandidate answer: {text}\n\n"
        "Is the candidate answer correct?"
    )
    out = await judge.generate([Message("system", JUDGE_PROMPT), Message("user", prompt)], temperature=0)
    first = (out.text.strip().splitlines() or [""])[0].upper()
    if re.search(r"\bINCORRECT\b", first):
        return "wrong", False, out.usage
    if re.search(r"\bCORRECT\b", first):
        return "correct", True, out.usage
    return "unscored", None, out.usage
