"""Run records (attempt, scorecard, meta, usage), the run directory, the attempt journal, the eval lock, provenance."""

from __future__ import annotations

from assay.runs._journal import Journal, latest_attempts, read_journal
from assay.runs._lock import EvalLock
from assay.runs._usage import CostSource, Usage
from assay.runs.records import (
    FINAL_STATUSES,
    MEASURED_STATUSES,
    Attempt,
    CaseSummary,
    ErrorInfo,
    MetricSpec,
    MetricValue,
    RunMeta,
    Scorecard,
    Status,
    SubjectConfig,
    Summary,
)
from assay.runs.rundir import load_meta, load_scorecard

__all__ = [
    "FINAL_STATUSES",
    "MEASURED_STATUSES",
    "Attempt",
    "CaseSummary",
    "CostSource",
    "ErrorInfo",
    "EvalLock",
    "Journal",
    "MetricSpec",
    "MetricValue",
    "RunMeta",
    "Scorecard",
    "Status",
    "SubjectConfig",
    "Summary",
    "Usage",
    "latest_attempts",
    "load_meta",
    "load_scorecard",
    "read_journal",
]
