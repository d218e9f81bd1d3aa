"""What a health report says of one case, one gated metric and one category (see :mod:`assay.gate._health`).

Below both the report (``_health``) and the tier moves suggested from its flags (``_health_moves``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from assay.runs.records import MetricKind

__all__ = ["FLAGS", "CaseHealth", "CategoryHealth", "Flag", "MetricFlag", "MetricHealth", "ModelCase"]

Flag = Literal["saturated", "always-fail", "inverted", "flaky", "skipped", "not-measured"]
FLAGS: tuple[Flag, ...] = ("saturated", "always-fail", "inverted", "flaky", "skipped", "not-measured")
MetricFlag = Literal["saturated", "inverted"]


class ModelCase(BaseModel):
    measured: int = 0
    passed: int = 0
    #: attempts that reached a verdict (PASS or FAIL): the judged ones, for a judged benchmark
    judged: int = 0
    skipped: int = 0
    pass_rate: float | None = None
    score_mean: float | None = None


class CaseHealth(BaseModel):
    case_id: str
    category: str
    flags: list[Flag]
    by_model: dict[str, ModelCase]


class MetricHealth(BaseModel):
    name: str
    kind: MetricKind | None
    direction: Literal["higher", "lower"]
    #: the metric's value on each model's first run
    by_model: dict[str, float | None]
    flags: list[MetricFlag]


class CategoryHealth(BaseModel):
    category: str
    cases: int
    strongest_pass_rate: float | None
    headroom: float | None
    #: what the pass rate is over: judged attempts (the agent benchmark) or all measured ones
    rate_over: Literal["judged", "measured"] = "measured"
