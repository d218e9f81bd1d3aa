"""The generic judge: messages and a parse function in, a typed outcome out. It knows no benchmark.

judge = Judge(model, constrained=holds_to_schema(spec))
outcome = await judge.ask(messages, parse, schema=answer_schema)   # parse raises JudgeParseError to retry
outcome.answer            # None after the retries (the caller records the attempt unjudged), or parse's value

Also: the prompt digest calibration records are keyed by, and the controls statistics (agreement, Cohen's
kappa, self-consistency). Each benchmark keeps its rubric, view and verdict in its own package.
"""

from __future__ import annotations

from assay.judge._answer import json_objects
from assay.judge._digest import prompt_digest
from assay.judge._judge import (
    DEFAULT_OPTIONS,
    DEFAULT_RETRIES,
    SCHEMA_DECODING_PROVIDERS,
    Judge,
    JudgeOutcome,
    JudgeParseError,
    holds_to_schema,
    refusal,
)
from assay.judge._stats import UNUSABLE, agreement, cohen_kappa, consistent, self_consistency

__all__ = [
    "DEFAULT_OPTIONS",
    "DEFAULT_RETRIES",
    "SCHEMA_DECODING_PROVIDERS",
    "UNUSABLE",
    "Judge",
    "JudgeOutcome",
    "JudgeParseError",
    "agreement",
    "cohen_kappa",
    "consistent",
    "holds_to_schema",
    "json_objects",
    "prompt_digest",
    "refusal",
    "self_consistency",
]
