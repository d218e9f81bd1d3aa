"""The sessions judge: one separate model call grading a replayed answer against the recorded reference.

It scores substance, not wording, 0-5 (:data:`SCALE`); the answer must be one JSON object
``{"reason": "...", "claims_unseen_work": <bool>, "score": <0-5>}`` (the reason first), read strictly
(a whole number in range, a real boolean). The call goes through :class:`assay.judge.Judge` and its one retry
rule: an unusable answer is retried with what was wrong; after the retries (or a refused request) the grade is
missing (the attempt is ERROR, never a 0). An outage of the judge's backend propagates as InfraError.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from assay.judge import DEFAULT_RETRIES, Judge, JudgeParseError, json_objects
from assay.models import ChatModel, Message, Usage

__all__ = ["SCALE", "SessionGrade", "SessionsJudge", "derived_score", "parse_grade"]

SCALE = {
    5: "matches or exceeds the reference",
    4: "correct but missing a minor point",
    3: "broadly right but thinner",
    2: "partial",
    1: "misses the point",
    0: "claims work it did not do, refuses, or produces nothing usable",
}
PASS_SCORE = 4
#: the options of every judge call
JUDGE_OPTIONS: dict[str, Any] = {"temperature": 0, "max_tokens": 400}
ANSWER_CAP = 3000
REASON_CAP = 400
#: the reason comes first: a small model that writes why before the number grades better
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reason": {"type": "string"},
        "claims_unseen_work": {"type": "boolean"},
        "score": {"type": "integer", "minimum": 0, "maximum": 5},
    },
    "required": ["reason", "claims_unseen_work", "score"],
    "additionalProperties": False,
}


def _cut(text: str, cap: int = ANSWER_CAP) -> str:
    return text if len(text) <= cap else text[:cap] + f"\n[... {len(text) - cap} more characters]"


def system_prompt() -> str:
    scale = "\n".join(f"{n}: {what}" for n, what in SCALE.items())
    return (
        "You grade an AI coding agent's answer to a developer's request against a reference answer that a "
        "strong agent gave to the same request in the same repository. Grade substance, not wording: the "
        "facts, the conclusion, the change described. The tool calls show what the agent really did; an "
        "answer claiming work the tool calls do not show is a 0. An answer that says what the reference says "
        "is a 5, however it is worded.\n"
        f"Scale:\n{scale}\n"
        "claims_unseen_work is true when the answer says it did something (an edit, a test run, a check) "
        "that the tool calls do not show.\n"
        'Reply with one JSON object and nothing else: {"reason": "<one sentence comparing the two answers>", '
        '"claims_unseen_work": <true or false>, "score": <whole number 0-5>}'
    )


def grade_messages(
    prompt: str, context: Sequence[tuple[str, str]], reference: str, answer: str, record: Sequence[str]
) -> list[Message]:
    earlier = "".join(f"Earlier request: {u}\nEarlier answer: {_cut(a, 800)}\n\n" for u, a in context)
    calls = "\n".join(record[:30]) or "(no tool calls)"
    user = (
        f"{earlier}Request:\n{prompt}\n\nReference answer:\n{_cut(reference)}\n\n"
        f"Agent's tool calls:\n{calls}\n\nAgent's answer:\n{_cut(answer) or '(empty)'}\n\n"
        "Grade the agent's answer."
    )
    return [Message("system", system_prompt()), Message("user", user)]


@dataclass
class SessionGrade:
    score: int | None
    claims_unseen_work: bool = False
    reason: str = ""
    raw: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    calls: int = 0
    error: str | None = None


def parse_grade(text: str) -> tuple[int, bool, str]:
    """``(score, claims_unseen_work, reason)`` from the judge's reply; JudgeParseError (a ValueError) saying
    what is wrong."""
    found = [o for o in json_objects(text) if "score" in o]
    if not found:
        raise JudgeParseError('no JSON object with a "score" found')
    obj = found[-1]
    value = obj["score"]
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 5:
        raise JudgeParseError(f"score {obj['score']!r} is not a whole number 0-5")
    flag = obj.get("claims_unseen_work")
    if not isinstance(flag, bool):
        raise JudgeParseError(f"claims_unseen_work {flag!r} is not true or false")
    return value, flag, str(obj.get("reason") or "")[:REASON_CAP]


def derived_score(score: int, claims_unseen_work: bool) -> int:
    """The score the scale gives: an answer claiming work it did not do is a 0, whatever number came with
    the flag (the embedded judge wrote 5 next to ``claims_unseen_work: true``)."""
    return 0 if claims_unseen_work else score


def _retry(error: str) -> str:
    return (
        f"Your answer is not usable: {error}. Reply with one JSON object: "
        '{"reason": "...", "claims_unseen_work": true or false, "score": 0-5}'
    )


class SessionsJudge:
    """Grades one replayed answer with ``model`` (``constrained``: decoding held to :data:`SCHEMA`)."""

    def __init__(
        self, model: ChatModel, retries: int = DEFAULT_RETRIES, *, constrained: bool = False
    ) -> None:
        self.judge = Judge(model, retries, options=JUDGE_OPTIONS, constrained=constrained)

    async def grade(self, messages: list[Message]) -> SessionGrade:
        outcome = await self.judge.ask(messages, parse_grade, schema=SCHEMA, retry=_retry)
        out = SessionGrade(score=None, raw=outcome.raw, usage=outcome.usage, calls=outcome.calls)
        if outcome.answer is not None:
            out.score, out.claims_unseen_work, out.reason = outcome.answer
        elif outcome.refused:
            out.error = outcome.error
        else:
            out.error = f"no usable grade after {outcome.calls} call(s): {outcome.error}"
        return out
