"""Run records, directories, the attempt journal, the eval lock, provenance, secret scrubbing, progress and Ctrl-C."""

from __future__ import annotations

from assay.runs._cancel import Cancelled, check_cancelled, run_process
from assay.runs._journal import Journal, latest_attempts, read_journal
from assay.runs._lock import EvalLock
from assay.runs._paths import assay_home
from assay.runs._progress import Phase, phase, reporting, ticking
from assay.runs._records import (
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
from assay.runs._rundir import load_meta, load_scorecard
from assay.runs._scrub import Scrubber

__all__ = [
    "FINAL_STATUSES",
    "MEASURED_STATUSES",
    "Attempt",
    "Cancelled",
    "CaseSummary",
    "ErrorInfo",
    "EvalLock",
    "Journal",
    "MetricSpec",
    "MetricValue",
    "Phase",
    "RunMeta",
    "Scorecard",
    "Scrubber",
    "Status",
    "SubjectConfig",
    "Summary",
    "assay_home",
    "check_cancelled",
    "latest_attempts",
    "load_meta",
    "load_scorecard",
    "phase",
    "read_journal",
    "reporting",
    "run_process",
    "ticking",
]
