"""Folding repeats into verdicts: stability labels, pass rates, pass@k / pass^k, intervals, noise floors."""

from __future__ import annotations

from assay.intervals import bootstrap_interval, wilson_interval
from assay.stats._passk import (
    case_pass_at_k,
    case_pass_hat_k,
    pass_at_k,
    pass_hat_k,
    suite_pass_at_k,
    suite_pass_hat_k,
)
from assay.stats.folding import fold, fold_case, stability_label
from assay.stats.noise import (
    CaseNoise,
    MetricNoise,
    NoiseReport,
    exact_drop_floor,
    load_noise,
    noise_from_scorecards,
    pass_rate_floor,
)

__all__ = [
    "CaseNoise",
    "MetricNoise",
    "NoiseReport",
    "bootstrap_interval",
    "case_pass_at_k",
    "case_pass_hat_k",
    "exact_drop_floor",
    "fold",
    "fold_case",
    "load_noise",
    "noise_from_scorecards",
    "pass_at_k",
    "pass_hat_k",
    "pass_rate_floor",
    "stability_label",
    "suite_pass_at_k",
    "suite_pass_hat_k",
    "wilson_interval",
]
