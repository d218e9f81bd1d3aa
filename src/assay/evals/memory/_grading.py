"""Answer grading the way each public yardstick's authors grade it.

- **LoCoMo token F1** (the LoCoMo paper's QA score): both sides lower-cased, commas and punctuation
  dropped, the words a/an/the/and dropped, Porter-stemmed, then F1 over the token multisets. Multi-hop
  answers are lists: each gold item takes its best-matching predicted item and the item scores are
  averaged. Open-domain golds keep only what precedes the first ``;`` (the rest is a rationale).
  Adversarial questions have no answer in the conversation: a reply scores 1 when it says the thing was
  not mentioned / no information is available, else 0.
- **LLM judge, CORRECT/WRONG with a reason** (as the Mem0 paper reports LoCoMo): generous on wording
  and on how a date is written, strict on the fact. Not applied to adversarial questions (Mem0 leaves
  that category out; its rule above is the paper's).
- **LongMemEval**: one yes/no judge prompt per question type, each with its authors' rule (temporal
  reasoning forgives an off-by-one count of days, weeks or months; knowledge-update accepts an answer
  that also mentions the old value as long as the updated one is given; preference questions are graded
  against a rubric; abstention questions pass when the reply says the question cannot be answered).
"""

from __future__ import annotations

import re
import string
from collections import Counter
from dataclasses import dataclass

from assay.evals.memory._porter import stem
from assay.judge import Judge, JudgeParseError, json_objects
from assay.models import Message
from assay.runs import Usage

__all__ = [
    "CATEGORIES",
    "Judged",
    "adversarial_credit",
    "judge_locomo",
    "judge_longmemeval",
    "locomo_f1",
    "longmemeval_prompt",
    "normalize_answer",
    "token_f1",
]

#: LoCoMo's ``category`` numbers as its evaluation code treats them
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}

_ARTICLES = re.compile(r"\b(a|an|the|and)\b")
_PUNCT = str.maketrans("", "", string.punctuation)
_NOT_SAID = ("no information available", "not mentioned")


def normalize_answer(text: str) -> str:
    """LoCoMo's answer normalisation: no commas, lower case, no punctuation, no a/an/the/and."""
    text = text.replace(",", "").lower().translate(_PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def token_f1(prediction: str, gold: str) -> float:
    """F1 of the stemmed, normalised tokens of ``prediction`` against ``gold`` (0 when nothing is shared)."""
    pred = [stem(w) for w in normalize_answer(prediction).split()]
    want = [stem(w) for w in normalize_answer(gold).split()]
    same = sum((Counter(pred) & Counter(want)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(want)
    return 2 * precision * recall / (precision + recall)


def adversarial_credit(prediction: str) -> float:
    """1 when the reply says the asked thing was never said (LoCoMo's rule for adversarial questions)."""
    low = prediction.lower()
    return 1.0 if any(p in low for p in _NOT_SAID) else 0.0


def locomo_f1(prediction: str, gold: str, category: int) -> float:
    """The LoCoMo paper's per-question answer score for ``category`` (1-5)."""
    if category == 5:
        return adversarial_credit(prediction)
    if category == 3:
        gold = gold.split(";")[0].strip()
    if category == 1:
        preds = [p.strip() for p in prediction.split(",")]
        golds = [g.strip() for g in gold.split(",")]
        return sum(max(token_f1(p, g) for p in preds) for g in golds) / len(golds)
    return token_f1(prediction, gold)


@dataclass
class Judged:
    """A judge's verdict: ``correct`` is None when the judge gave no usable answer (the case is unjudged)."""

    correct: bool | None
    reason: str
    usage: Usage
    error: str | None = None


_LOCOMO_JUDGE = """You grade one answer to a question about two people's past conversations.

Question: {question}
Gold answer: {gold}
Answer to grade: {answer}

Label the answer CORRECT when it gives the same fact as the gold answer, however it is worded, even if
it is longer or adds detail; WRONG when it gives another fact, misses it, or says it does not know. For a
question about time, the answer is CORRECT when it points to the same date or period as the gold answer,
even written differently ("7 May" and "May 7th") or relative to the conversation ("the week before").

Reply with one JSON object: {{"reason": "<one sentence>", "label": "CORRECT" or "WRONG"}}"""

LOCOMO_JUDGE_SCHEMA = {
    "type": "object",
    "properties": {"reason": {"type": "string"}, "label": {"enum": ["CORRECT", "WRONG"]}},
    "required": ["reason", "label"],
}


def _parse_label(text: str) -> tuple[bool, str]:
    for obj in reversed(json_objects(text)):
        label = str(obj.get("label", "")).strip().upper()
        if label in ("CORRECT", "WRONG"):
            return label == "CORRECT", str(obj.get("reason", "")).strip()
    raise JudgeParseError('no JSON object with "label": "CORRECT" or "WRONG"')


async def judge_locomo(judge: Judge, question: str, gold: str, answer: str) -> Judged:
    """The CORRECT/WRONG judgment (with its reason) of one LoCoMo answer."""
    prompt = _LOCOMO_JUDGE.format(question=question, gold=gold, answer=answer)
    out = await judge.ask([Message("user", prompt)], _parse_label, schema=LOCOMO_JUDGE_SCHEMA)
    if out.answer is None:
        return Judged(None, "", out.usage, out.error or "the judge gave no usable answer")
    correct, reason = out.answer
    return Judged(correct, reason, out.usage)


_LME_BASE = (
    "You check a model's reply against the correct answer to a question.\n\n"
    "Question: {question}\n\nCorrect answer: {answer}\n\nReply: {reply}\n\n"
)
_LME_RULES = {
    "default": (
        "Say yes when the reply gives the correct answer, or says the same thing in other words, or shows "
        "every step that leads to it. Say no when it gives something else or only part of what the answer "
        "needs."
    ),
    "temporal-reasoning": (
        "Say yes when the reply gives the correct answer, or says the same thing in other words, or shows "
        "every step that leads to it. Say no when it gives something else or only part of what the answer "
        "needs. A count of days, weeks, months or years that is off by one still counts as correct (19 days "
        "for a correct answer of 18 days is yes)."
    ),
    "knowledge-update": (
        "The user's information changed over time and the correct answer is the latest value. Say yes when "
        "the reply gives that latest value, even if it also mentions what it used to be; say no when it "
        "gives only an old value or something else."
    ),
    "single-session-preference": (
        "Here the correct answer is a description of what a good, personalised reply looks like. Say yes "
        "when the reply uses what it knows about the user the way the description asks (it need not cover "
        "every point); say no when it ignores or gets wrong the user's own information."
    ),
}
_LME_ABSTAIN = (
    "You check a model's reply to a question that cannot be answered from what the user said.\n\n"
    "Question: {question}\n\nWhy it cannot be answered: {answer}\n\nReply: {reply}\n\n"
    "Say yes when the reply recognises that it cannot answer: it says the information is missing or "
    "incomplete, or that something else was said but not what is asked. Say no when it gives an answer."
)
_LME_END = "\n\nAnswer with one word: yes or no."


def longmemeval_prompt(
    question_type: str, question: str, answer: str, reply: str, *, abstention: bool
) -> str:
    """The yes/no grading prompt of ``question_type`` (abstention questions have their own)."""
    if abstention:
        return _LME_ABSTAIN.format(question=question, answer=answer, reply=reply) + _LME_END
    rule = _LME_RULES.get(question_type, _LME_RULES["default"])
    return _LME_BASE.format(question=question, answer=answer, reply=reply) + rule + _LME_END


def _parse_yes_no(text: str) -> tuple[bool, str]:
    words = re.findall(r"[a-z]+", text.lower())
    if "yes" in words[:3] or (words and words[0] == "yes"):
        return True, text.strip()[:200]
    if "no" in words[:3]:
        return False, text.strip()[:200]
    raise JudgeParseError("the reply starts with neither yes nor no")


async def judge_longmemeval(
    judge: Judge, question_type: str, question: str, answer: str, reply: str, *, abstention: bool
) -> Judged:
    """Whether ``reply`` is right under ``question_type``'s rule (LongMemEval's own grading)."""
    prompt = longmemeval_prompt(question_type, question, answer, reply, abstention=abstention)
    out = await judge.ask([Message("user", prompt)], _parse_yes_no)
    if out.answer is None:
        return Judged(None, "", out.usage, out.error or "the judge gave no usable answer")
    correct, raw = out.answer
    return Judged(correct, raw, out.usage)
