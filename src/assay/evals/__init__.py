"""Benchmarks: one package per benchmark, sharing the runner, stats, gate and report."""

from __future__ import annotations

from assay.evals._base import AttemptContext, Benchmark, Case, Outcome, Suite
from assay.evals._registry import available, get_benchmark, register
from assay.exec._options import BenchmarkOptions, Flag

__all__ = [
    "AttemptContext",
    "Benchmark",
    "BenchmarkOptions",
    "Case",
    "Flag",
    "Outcome",
    "Suite",
    "available",
    "get_benchmark",
    "register",
]
