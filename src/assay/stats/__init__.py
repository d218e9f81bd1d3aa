"""Folding repeats into verdicts: stability labels, pass rates, intervals."""

from __future__ import annotations

from assay.stats._fold import fold, fold_case, stability_label
from assay.stats._intervals import bootstrap_interval, wilson_interval

__all__ = ["bootstrap_interval", "fold", "fold_case", "stability_label", "wilson_interval"]
