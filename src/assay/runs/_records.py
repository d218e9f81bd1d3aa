"""The saved records every benchmark shares: attempts, run metadata and the scorecard.

All are versioned pydantic models; ``schema_version`` changes when a field changes meaning.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, Field

from assay.models._usage import Usage

SCHEMA_VERSION = 1

Direction = Literal["higher", "lower"]


class Status(StrEnum):
    PASS = "PASS"
    FAIL = "FAIL"
    ERROR = "ERROR"
    INFRA_ERROR = "INFRA_ERROR"
    TIMEOUT = "TIMEOUT"
    SKIPPED = "SKIPPED"
    NOT_RUN = "NOT_RUN"


#: statuses after which a (case, iteration) is not run again on resume
FINAL_STATUSES = frozenset({Status.PASS, Status.FAIL, Status.ERROR, Status.TIMEOUT, Status.SKIPPED})
#: statuses that count in a pass-rate denominator (the subject was really measured)
MEASURED_STATUSES = frozenset({Status.PASS, Status.FAIL, Status.ERROR, Status.TIMEOUT})


class ErrorInfo(BaseModel):
    type: str
    message: str


class Attempt(BaseModel):
    """One line of ``results.jsonl``: one attempt of one case."""

    schema_version: int = SCHEMA_VERSION
    case_id: str
    iteration: int = 0
    category: str = "default"
    status: Status
    score: float | None = None
    metrics: dict[str, float] = Field(default_factory=dict)
    started_at: datetime
    elapsed_s: float = 0.0
    commit: str | None = None
    error: ErrorInfo | None = None
    skip_reason: str | None = None
    usage: Usage | None = None
    details: dict[str, Any] = Field(default_factory=dict)

    @property
    def key(self) -> tuple[str, int]:
        return (self.case_id, self.iteration)


class SubjectConfig(BaseModel):
    """What makes two runs comparable."""

    subject: str | None = None
    model: str | None = None
    judge_model: str | None = None
    embedder: str | None = None
    extra: dict[str, Any] = Field(default_factory=dict)


class RunMeta(BaseModel):
    """``meta.json``: provenance, and everything needed to resume the run under its own config."""

    schema_version: int = SCHEMA_VERSION
    run_id: str
    benchmark: str
    suite: str
    suite_version: str
    assay_version: str
    git_commit: str | None = None
    git_dirty: bool | None = None
    hostname: str
    os: str
    cpu_count: int
    python: str
    command_line: list[str]
    config: SubjectConfig
    options: dict[str, Any]
    seed: int = 0
    iterations: int = 1
    case_ids: list[str]
    started_at: datetime
    #: when the run (or its latest resume) finished, and the seconds it ran in all, resumes included
    finished_at: datetime | None = None
    elapsed_s: float | None = None


class MetricSpec(BaseModel):
    """How a metric is read: which way is better, how much change is noise, whether it is gated."""

    name: str
    direction: Direction = "higher"
    tolerance: float = 0.0
    gated: bool = True
    unit: str = ""


class MetricValue(BaseModel):
    value: float | None
    low: float | None = None
    high: float | None = None
    n: int = 0
    direction: Direction = "higher"
    tolerance: float = 0.0
    gated: bool = True
    unit: str = ""


Stability = Literal["stable-pass", "stable-fail", "flaky", "not-measured"]


class CaseSummary(BaseModel):
    case_id: str
    category: str = "default"
    counts: dict[str, int]
    measured: int
    passed: int
    pass_rate: float | None
    stability: Stability
    score_mean: float | None = None
    score_std: float | None = None
    metrics: dict[str, float] = Field(default_factory=dict)
    mean_elapsed_s: float | None = None
    usage: Usage | None = None


class Summary(BaseModel):
    counts: dict[str, int]
    total: int
    measured: int
    pass_rate: float | None
    pass_rate_low: float | None = None
    pass_rate_high: float | None = None
    judged_pass_rate: float | None = None
    metrics: dict[str, MetricValue] = Field(default_factory=dict)
    by_category: dict[str, dict[str, float | None]] = Field(default_factory=dict)


class Scorecard(BaseModel):
    """``scorecard.json``: a run folded into what people compare."""

    schema_version: int = SCHEMA_VERSION
    run_id: str
    benchmark: str
    suite: str
    suite_version: str
    config: SubjectConfig
    iterations: int
    summary: Summary
    cases: list[CaseSummary]
    cost: Usage
    commits: list[str]
    mixed_commits: bool
    complete: bool
    created_at: datetime
    extra: dict[str, Any] = Field(default_factory=dict)

    def case(self, case_id: str) -> CaseSummary | None:
        for c in self.cases:
            if c.case_id == case_id:
                return c
        return None
