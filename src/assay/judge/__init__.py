"""Judging agent conversations: a fixed rubric, a strict answer parser, and the verdict re-derived in code.

view = JudgeView.of(scenario, turns, checks)
outcome = await Judge(model).judge(view)          # answer None after retries -> the caller records ERROR
judgement = derive(outcome.answer, checks, view.n_turns)
judgement.passed, judgement.score, judgement.overruled, judgement.disagreements
"""

from __future__ import annotations

from assay.judge._answer import (
    Finding,
    JudgeAnswer,
    JudgeParseError,
    TurnJudgement,
    answer_schema,
    parse_judge_answer,
)
from assay.judge._judge import Judge, JudgeOutcome, holds_to_schema
from assay.judge._prompt import JUDGE_SYSTEM_PROMPT, JudgeView, judge_messages, judge_prompt_digest
from assay.judge._rubric import (
    DIMENSION_NAMES,
    DIMENSIONS,
    MAX_SCORE,
    MIN_CORE,
    PASS_THRESHOLD,
    RUBRIC_VERSION,
    ZERO_RULE_NAMES,
    ZERO_RULES,
    Dimension,
    ZeroRule,
    turn_score,
)
from assay.judge._verdict import Judgement, TurnVerdict, derive

__all__ = [
    "DIMENSIONS",
    "DIMENSION_NAMES",
    "JUDGE_SYSTEM_PROMPT",
    "MAX_SCORE",
    "MIN_CORE",
    "PASS_THRESHOLD",
    "RUBRIC_VERSION",
    "ZERO_RULES",
    "ZERO_RULE_NAMES",
    "Dimension",
    "Finding",
    "Judge",
    "JudgeAnswer",
    "JudgeOutcome",
    "JudgeParseError",
    "JudgeView",
    "Judgement",
    "TurnJudgement",
    "TurnVerdict",
    "ZeroRule",
    "answer_schema",
    "derive",
    "holds_to_schema",
    "judge_messages",
    "judge_prompt_digest",
    "parse_judge_answer",
    "turn_score",
]
