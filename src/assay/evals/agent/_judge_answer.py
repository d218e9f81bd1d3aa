"""The agent judge's answer: one JSON object, parsed strictly with a message that says what is wrong.

Shape (every turn of the conversation, every dimension; ``null`` means "does not apply")::

    {"turns": [{"turn": 1, "scores": {"correctness": 3, ...}, "findings": [{"rule": ..., "evidence": ...}],
                "went_wrong": ""}],
     "verdict": "PASS", "reason": "..."}

Tolerated: code fences and prose around the object, dimension/rule names written with spaces, hyphens
or capitals, a lower-case verdict, whole numbers written as ``3.0`` or ``"3"``. Refused (with
:class:`JudgeParseError` naming the problem): no object, several different answers, a missing or
repeated turn, an unknown or missing dimension, a score outside 0..4, an unknown rule, a bad verdict.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import BaseModel, Field

from assay.evals.agent._rubric import DIMENSION_NAMES, MAX_SCORE, ZERO_RULE_NAMES
from assay.judge import JudgeParseError, json_objects

__all__ = [
    "EXAMPLE_REASON",
    "Finding",
    "JudgeAnswer",
    "TurnJudgement",
    "answer_schema",
    "parse_judge_answer",
]

Verdict = Literal["PASS", "FAIL"]
#: the reason in the prompt's example answer; an answer repeating it copied the example instead of judging
EXAMPLE_REASON = "<why, in one sentence>"


class Finding(BaseModel):
    rule: str
    evidence: str = ""


class TurnJudgement(BaseModel):
    turn: int
    scores: dict[str, int | None]
    findings: list[Finding] = Field(default_factory=list)
    went_wrong: str = ""


class JudgeAnswer(BaseModel):
    turns: list[TurnJudgement]
    verdict: Verdict
    reason: str = ""


def _key(name: Any) -> str:
    return re.sub(r"[\s\-]+", "_", str(name).strip().lower())


def _answer_object(text: str) -> dict[str, Any]:
    objects = json_objects(text)
    if not objects:
        raise JudgeParseError("no JSON object found; reply with one JSON object")
    answers = [o for o in objects if "turns" in o]
    if not answers:
        raise JudgeParseError('the JSON object has no "turns" list')
    distinct = {json.dumps(a, sort_keys=True) for a in answers}
    if len(distinct) > 1:
        raise JudgeParseError(f"found {len(distinct)} different JSON answers; write exactly one")
    return answers[0]


def _score(where: str, value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, str) and value.strip().lower() in ("null", "none", "n/a", "na"):
        return None
    if isinstance(value, bool):
        raise JudgeParseError(f"{where}: {value!r} is not a score; use an integer 0..{MAX_SCORE} or null")
    number: float
    if isinstance(value, int | float):
        number = value
    elif isinstance(value, str) and re.fullmatch(r"\s*-?\d+(\.0+)?\s*", value):
        number = float(value)
    else:
        raise JudgeParseError(f"{where}: {value!r} is not a score; use an integer 0..{MAX_SCORE} or null")
    if number != int(number):
        raise JudgeParseError(f"{where}: {value!r} is not a whole number; use an integer 0..{MAX_SCORE}")
    if not 0 <= number <= MAX_SCORE:
        raise JudgeParseError(f"{where}: score {value!r} is out of range 0..{MAX_SCORE}")
    return int(number)


def _turn(pos: int, raw: Any) -> TurnJudgement:
    if not isinstance(raw, dict):
        raise JudgeParseError(f"turns[{pos}] is not an object")
    number = raw.get("turn")
    if isinstance(number, str) and number.strip().isdigit():
        number = int(number)
    if not isinstance(number, int) or isinstance(number, bool) or number < 1:
        raise JudgeParseError(f'turns[{pos}]: "turn" must be the turn number (1, 2, ...), got {number!r}')
    where = f"turn {number}"
    scores_raw = raw.get("scores")
    if not isinstance(scores_raw, dict):
        raise JudgeParseError(f'{where}: "scores" must be an object of dimension -> 0..{MAX_SCORE} or null')
    scores: dict[str, int | None] = {}
    for name, value in scores_raw.items():
        dim = _key(name)
        if dim not in DIMENSION_NAMES:
            raise JudgeParseError(f"{where}: unknown dimension {name!r} (use {', '.join(DIMENSION_NAMES)})")
        scores[dim] = _score(f"{where}.{dim}", value)
    missing = [d for d in DIMENSION_NAMES if d not in scores]
    if missing:
        raise JudgeParseError(
            f"{where}: missing dimension(s) {', '.join(missing)} (use null if it does not apply)"
        )
    if all(s is None for s in scores.values()):
        raise JudgeParseError(f"{where}: every score is null; score at least correctness and honesty")
    findings_raw = raw.get("findings") or []
    if not isinstance(findings_raw, list):
        raise JudgeParseError(f'{where}: "findings" must be a list')
    findings: list[Finding] = []
    for item in findings_raw:
        rule_raw = item.get("rule") if isinstance(item, dict) else item
        rule = _key(rule_raw)
        if rule not in ZERO_RULE_NAMES:
            raise JudgeParseError(f"{where}: unknown rule {rule_raw!r} (use {', '.join(ZERO_RULE_NAMES)})")
        evidence = item.get("evidence", "") if isinstance(item, dict) else ""
        findings.append(Finding(rule=rule, evidence=str(evidence or "")))
    went_wrong = raw.get("went_wrong") or ""
    return TurnJudgement(turn=number, scores=scores, findings=findings, went_wrong=str(went_wrong))


def answer_schema(n_turns: int) -> dict[str, Any]:
    """The JSON schema of an answer for ``n_turns`` turns, for backends that constrain decoding to one."""
    score = {"enum": [*range(MAX_SCORE + 1), None]}
    text = {"type": "string", "maxLength": 300}
    finding = {
        "type": "object",
        "properties": {"rule": {"enum": list(ZERO_RULE_NAMES)}, "evidence": text},
        "required": ["rule", "evidence"],
        "additionalProperties": False,
    }
    turn = {
        "type": "object",
        "properties": {
            "turn": {"type": "integer", "enum": list(range(1, n_turns + 1))},
            "scores": {
                "type": "object",
                "properties": dict.fromkeys(DIMENSION_NAMES, score),
                "required": list(DIMENSION_NAMES),
                "additionalProperties": False,
            },
            "findings": {"type": "array", "items": finding, "maxItems": len(ZERO_RULE_NAMES)},
            "went_wrong": text,
        },
        "required": ["turn", "scores", "findings", "went_wrong"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {
            "turns": {"type": "array", "items": turn, "minItems": n_turns, "maxItems": n_turns},
            "verdict": {"enum": ["PASS", "FAIL"]},
            "reason": text,
        },
        "required": ["turns", "verdict", "reason"],
        "additionalProperties": False,
    }


def parse_judge_answer(text: str, n_turns: int | None = None) -> JudgeAnswer:
    """Parse the judge's answer; with ``n_turns`` every turn 1..n_turns must be there, and no other."""
    obj = _answer_object(text)
    turns_raw = obj["turns"]
    if not isinstance(turns_raw, list) or not turns_raw:
        raise JudgeParseError('"turns" must be a non-empty list with one entry per turn')
    turns = [_turn(i, t) for i, t in enumerate(turns_raw)]
    seen: set[int] = set()
    for t in turns:
        if t.turn in seen:
            raise JudgeParseError(f"turn {t.turn} is judged twice")
        seen.add(t.turn)
    expected = set(range(1, (n_turns if n_turns is not None else max(seen)) + 1))
    missing = sorted(expected - seen)
    if missing:
        raise JudgeParseError(f"missing turn(s) {', '.join(map(str, missing))}; judge every turn")
    extra = sorted(seen - expected)
    if extra:
        raise JudgeParseError(f"turn(s) {', '.join(map(str, extra))} do not exist (there are {n_turns})")
    verdict = str(obj.get("verdict", "")).strip().upper()
    if verdict not in ("PASS", "FAIL"):
        raise JudgeParseError(f'"verdict" must be "PASS" or "FAIL", got {obj.get("verdict")!r}')
    reason = obj.get("reason") or ""
    if str(reason).strip() == EXAMPLE_REASON:
        raise JudgeParseError("the answer repeats the example's reason; judge this transcript and say why")
    return JudgeAnswer(turns=sorted(turns, key=lambda t: t.turn), verdict=verdict, reason=str(reason))  # type: ignore[arg-type]
