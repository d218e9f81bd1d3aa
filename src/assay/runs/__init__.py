"""Run directories, the attempt journal, resume, the eval lock, secret scrubbing, progress and Ctrl-C."""

from __future__ import annotations

from typing import Any

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
    "RunOptions",
    "RunResult",
    "Scorecard",
    "Scrubber",
    "Status",
    "SubjectConfig",
    "Summary",
    "arun_benchmark",
    "assay_home",
    "check_cancelled",
    "latest_attempts",
    "load_meta",
    "load_scorecard",
    "phase",
    "read_journal",
    "reporting",
    "run_benchmark",
    "run_process",
    "ticking",
]


_RUNNER = {"RunOptions", "RunResult", "arun_benchmark", "run_benchmark"}


def __getattr__(name: str) -> Any:
    # the runner imports the benchmark base class, which imports these records: load it on first use
    if name in _RUNNER:
        from assay.runs import _runner

        return getattr(_runner, name)
    raise AttributeError(name)
