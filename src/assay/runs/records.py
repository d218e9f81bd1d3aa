"""The saved records every benchmark shares: attempts, run metadata and the scorecard.

All are versioned pydantic models; ``schema_version`` changes when a field changes meaning.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, model_serializer, model_validator

from assay.intervals import clustered_interval
from assay.runs._usage import Usage

#: 2: metrics declare their kind (MetricValue.kind, items, samples); a case measured once is labelled
#: single-pass/single-fail, never stable-*; the run-level pass-rate interval is clustered by case.
SCHEMA_VERSION = 2

Direction = Literal["higher", "lower"]
#: how a metric varies by chance, and so how it is compared (see ``assay.gate._tolerance``):
#: a proportion over ``n`` independent items (recall@k, accuracy), a continuous measure (latency,
#: throughput, tokens, cost) or a count of events (documents that failed, errors).
MetricKind = Literal["proportion", "continuous", "count"]
METRIC_KINDS: tuple[MetricKind, ...] = ("proportion", "continuous", "count")


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
    #: an ERROR attempt of an agent benchmark (or a FAIL a code check decided before it broke): whether the
    #: harness (its run raised) or the agent (it crashed, its output was unreadable) broke; None otherwise and in journals written before it (a field added, none
    #: changed meaning: the schema version stays)
    broken_by: Literal["harness", "agent"] | None = None

    @model_serializer(mode="wrap")
    def _without_unbroken(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """``broken_by`` is written only when something broke: other lines stay as they were before it."""
        data = handler(self)
        if data.get("broken_by") is None:
            data.pop("broken_by", None)
        return data

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
    """How a metric is read: its kind, which way is better, how much change is noise, whether it is gated.

    ``tolerance`` is the least change that counts, in the kind's own terms: an absolute difference of the
    proportion, a *relative* change of a continuous measure (0.1 = 10%), a number of events of a count.
    The gate widens it by the kind's noise rule; it never narrows it.
    """

    name: str
    kind: MetricKind
    direction: Direction = "higher"
    tolerance: float = Field(default=0.0, ge=0.0)
    gated: bool = True
    unit: str = ""


class MetricValue(BaseModel):
    """A run-level metric.

    ``n`` is the number of independent items a proportion is over (questions, emails: never inflated to
    steer the gate), or the number of values a continuous metric or count summarises. ``samples`` are the
    per-request or per-attempt values of a continuous metric (what its noise is measured from) and
    ``stat`` the statistic ``value`` is of them (``mean`` or a percentile ``p50``, ``p90``...).
    ``source`` is ``cases`` when the value is the mean of the per-case values in the scorecard (the
    gate then pairs cases), ``run`` when a benchmark computed it. ``kind`` is None only in scorecards of
    schema 1, written before metrics declared kinds.
    """

    value: float | None
    low: float | None = None
    high: float | None = None
    n: int = 0
    kind: MetricKind | None = None
    direction: Direction = "higher"
    tolerance: float = 0.0
    gated: bool = True
    unit: str = ""
    samples: list[float] = Field(default_factory=list)
    stat: str = "mean"
    source: Literal["cases", "run"] = "run"


#: ``single-pass``/``single-fail``: one measured attempt, which cannot tell stable from flaky
#: ``skipped``: every attempt was SKIPPED with a reason (``CaseSummary.skip_reason``): not unmeasured
Stability = Literal[
    "stable-pass", "stable-fail", "flaky", "single-pass", "single-fail", "skipped", "not-measured"
]


class CaseSummary(BaseModel):
    case_id: str
    category: str = "default"
    counts: dict[str, int]
    measured: int
    passed: int
    pass_rate: float | None
    stability: Stability
    skip_reason: str | None = None
    score_mean: float | None = None
    score_std: float | None = None
    metrics: dict[str, float] = Field(default_factory=dict)
    mean_elapsed_s: float | None = None
    usage: Usage | None = None
    #: pass^k (every one of k attempts passes; tau2-bench's estimator C(passed, k) / C(measured, k)) for
    #: k = 1..its measured attempts, in a run of two or more iterations; empty otherwise
    pass_hat_k: dict[int, float] = Field(default_factory=dict)


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
    #: pass^k averaged over the cases measured at least k times, k = 1..the run's iterations (runs of two or
    #: more iterations; empty otherwise): how often the agent gets a case right k times in a row
    pass_hat_k: dict[int, float] = Field(default_factory=dict)


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

    @model_validator(mode="before")
    @classmethod
    def _read_older(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(v := data.get("schema_version"), int) and v < SCHEMA_VERSION:
            return upgrade_scorecard_v1(data)
        return data

    def case(self, case_id: str) -> CaseSummary | None:
        for c in self.cases:
            if c.case_id == case_id:
                return c
        return None


def upgrade_scorecard_v1(data: dict[str, Any]) -> dict[str, Any]:
    """Read a schema-1 scorecard as schema 2 wherever its numbers allow; ``schema_version`` stays 1.

    A case measured once becomes ``single-pass``/``single-fail`` and a case whose only attempts were
    skipped becomes ``skipped`` (the counts say so); the run's pass-rate interval is recomputed over cases;
    a metric the cases carry is marked ``source="cases"`` (schema 1 folded those as their mean over cases).
    Metrics keep ``kind`` None: schema 1 never declared it, so the gate takes the kind from the run it
    is compared with, and compares no metric that neither side declares.
    """
    out = dict(data)
    cases = []
    for raw in data.get("cases") or []:
        case = dict(raw)
        measured, counts = case.get("measured", 0), case.get("counts") or {}
        if measured == 1:
            case["stability"] = "single-pass" if case.get("passed") else "single-fail"
        elif (
            measured == 0
            and counts.get("SKIPPED")
            and not any(
                n for s, n in counts.items() if s not in ("SKIPPED", *(m.value for m in MEASURED_STATUSES))
            )
        ):
            case["stability"] = "skipped"
        cases.append(case)
    out["cases"] = cases
    summary = dict(data.get("summary") or {})
    # schema 1 folded every per-case metric into its mean over cases: those can be paired case by case
    per_case = {name for c in cases for name in (c.get("metrics") or {})}
    summary["metrics"] = {
        name: {**mv, "source": "cases"} if name in per_case and isinstance(mv, dict) else mv
        for name, mv in (summary.get("metrics") or {}).items()
    }
    out["summary"] = summary
    if summary.get("measured"):
        low, high = clustered_interval(
            [c.get("passed", 0) for c in cases], [c.get("measured", 0) for c in cases]
        )
        summary["pass_rate_low"], summary["pass_rate_high"] = low, high
        out["summary"] = summary
    return out
