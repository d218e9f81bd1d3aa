"""Holding a run to account: compare with a baseline, gate on expectations, check scenario health.

* :func:`compare` puts every case in one bucket and decides the exit code (0 ok, 2 regression, 3 not
  comparable); :func:`save_baseline` keeps a run to compare against.
* :func:`gate` checks a run against its expectations file; :func:`propose` writes one from runs.
* :func:`health` flags saturated, always-fail, inverted and flaky cases; :func:`noise` writes noise.json.
* :func:`hold` is what the engine calls once after a run: a :class:`Verdict` with the exit code and why.
"""

from __future__ import annotations

from assay.gate._baseline import save_baseline
from assay.gate._complete import unmeasured_cases, unspent_cases
from assay.gate._detect import detect_line, detect_lines, detectable_change, items_to_detect
from assay.gate._expect import (
    Check,
    Expectations,
    GateResult,
    find_expectations,
    gate,
    load_expectations,
    measure,
    propose,
)
from assay.gate._health import CaseHealth, CategoryHealth, HealthReport, MetricHealth, health, health_markdown
from assay.gate._health_moves import MoveAdvice, MoveAdvisor, MoveSuggestion
from assay.gate._hold import check_options, hold, save_verdict
from assay.gate._load import LoadedRun, load_run
from assay.gate._noise import noise, run_noise_command
from assay.gate._render import comparison_markdown, print_comparison, print_gate, print_verdict
from assay.gate._verdict import Finding, GateOptions, Verdict, decide, load_verdict, verdict_of
from assay.gate.comparison import (
    BUCKETS,
    Bucket,
    CaseComparison,
    Comparison,
    MetricComparison,
    compare,
    load_comparison,
    not_comparable_reasons,
)

# fmt: off
__all__ = [
    "BUCKETS", "Bucket", "CaseComparison", "CaseHealth", "CategoryHealth", "Check", "Comparison",
    "Expectations", "Finding", "GateOptions", "GateResult", "HealthReport", "LoadedRun", "MetricComparison",
    "MetricHealth", "MoveAdvice", "MoveAdvisor", "MoveSuggestion",
    "Verdict", "check_options", "compare", "comparison_markdown", "decide", "detect_line", "detect_lines",
    "detectable_change",
    "find_expectations", "gate", "health", "health_markdown", "hold", "items_to_detect", "load_comparison",
    "load_expectations", "load_run", "load_verdict", "measure", "noise", "not_comparable_reasons",
    "print_comparison", "print_gate", "print_verdict", "propose", "run_noise_command", "save_baseline",
    "save_verdict", "unmeasured_cases", "unspent_cases", "verdict_of",
]
# fmt: on
